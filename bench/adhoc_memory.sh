#!/usr/bin/env bash
# Peak RSS (VmHWM) of the server for ad-hoc reads over a large table and
# for INSERT ... SELECT, for two server binaries side by side in one run
# (issue 39: reads and writes of any size in bounded memory).
#
#   bench/adhoc_memory.sh BEFORE_BIN AFTER_BIN [ROWS...]
#
# For each binary: a fresh server loads generate_series(1, 2000000) with
# INSERT ... SELECT (peak RSS of that server since its start), then, for
# each table size in ROWS (default 2000000 10000000), a table of that many
# rows is loaded once by COPY (with AFTER_BIN) and each binary is started
# on it and runs SELECT count(*), SELECT sum(v) ... WHERE and SELECT *
# ... LIMIT 10, the peak RSS read after each query (VmHWM only grows, so
# each query gets a server of its own). Ports are picked free; data under
# $DIR (default /dev/shm/adhoc-memory). Needs psql.
set -euo pipefail
before=$1 after=$2
shift 2
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(2000000 10000000)
dir=${DIR:-/dev/shm/adhoc-memory}
rm -rf "$dir"
mkdir -p "$dir"
# shellcheck source=memory_lib.sh
source "$(dirname "$0")/memory_lib.sh"

echo "INSERT INTO t SELECT g, g, 'row ' || g FROM generate_series(1, 2000000) g"
echo "  (peak RSS of a fresh server since its start, time of the statement)"
for bin in "$before" "$after"; do
	echo " $bin"
	rm -rf "$dir/ins"
	start "$bin" "$dir/ins"
	psqlq -c "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)"
	timed "INSERT ... SELECT 2M rows" "INSERT INTO t SELECT g, g, 'row ' || g FROM generate_series(1, 2000000) g"
	timed "SELECT count(*) (same server, after)" "SELECT count(*) FROM t"
	stop
done

for n in "${sizes[@]}"; do
	echo
	echo "a table of $n rows (k bigint PRIMARY KEY, v bigint, s text), loaded by COPY"
	rm -rf "$dir/data" "$dir/rows.tsv"
	seq 1 "$n" | awk '{print $1 "\t" $1 "\trow " $1}' >"$dir/rows.tsv"
	start "$after" "$dir/data"
	psqlq -c "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)"
	psqlq -c "\\copy t FROM '$dir/rows.tsv'"
	psqlq -c "SELECT count(*) FROM t" >/dev/null
	stop
	rm -f "$dir/rows.tsv"
	for q in "SELECT count(*) FROM t" "SELECT sum(v) FROM t WHERE v % 3 = 0" "SELECT * FROM t LIMIT 10"; do
		echo " $q  (peak RSS of a server started for it)"
		for bin in "$before" "$after"; do
			start "$bin" "$dir/data"
			base=$(hwm)
			timed "$bin (at start: $base)" "$q"
			stop
		done
	done
done
