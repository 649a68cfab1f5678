# Shared functions of the bench/*_memory.sh scripts: servers on ports
# picked free at run time, psql against the running one, and its peak
# RSS. Source it after setting $dir (the scripts' data directory); it
# sets $pid, $port and $http (its metrics endpoint) for the server
# started last.
pid=
port=
http=
freeport() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
psqlq() { psql -X -q -t -A -h 127.0.0.1 -p "$port" -U streamdb streamdb "$@"; }
start() { # binary data-dir
	port=$(freeport)
	http=$(freeport)
	"$1" --data-dir "$2" --listen 127.0.0.1:"$port" --nats-listen 127.0.0.1:"$(freeport)" \
		--http-listen 127.0.0.1:"$http" >>"$dir/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 1200); do
		psqlq -c 'SELECT 1' >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	echo "server did not start" >&2
	exit 1
}
stop() {
	kill "$pid"
	wait "$pid" || true
}
# memory: where the server's resident memory is now, from its metrics:
# the Go heap in use, the heap Go freed but has not returned to the OS
# (idle minus released), Pebble's block cache, and the RSS.
memory() {
	curl -s "127.0.0.1:$http/metrics" | awk -v rss="$(awk '/VmRSS/ {print $2 * 1024}' "/proc/$pid/status")" '
		$1 == "go_memstats_heap_inuse_bytes" { inuse = $2 }
		$1 == "go_memstats_heap_idle_bytes" { idle = $2 }
		$1 == "go_memstats_heap_released_bytes" { released = $2 }
		$1 == "streamdb_pebble_block_cache_bytes" { cache = $2 }
		END { printf "heap in use %d MiB, freed not returned %d MiB, block cache %d MiB, RSS %d MiB\n",
			inuse / 1048576, (idle - released) / 1048576, cache / 1048576, rss / 1048576 }'
}
hwm() { awk '/VmHWM/ {printf "%d MiB", $2 / 1024}' "/proc/$pid/status"; }
timed() { # label sql
	local t0 t1 out
	t0=$(date +%s.%N)
	out=$(psqlq -c "$2" 2>&1 | tr '\n' ' ' | cut -c1-40)
	t1=$(date +%s.%N)
	printf '  %-58s %-10s %6.1f s  -> %s\n' "$1" "$(hwm)" "$(echo "$t1 - $t0" | bc)" "$out"
}
