#!/usr/bin/env bash
# Peak RSS (VmHWM) of the server for a transaction block that inserts
# millions of rows and then commits, for two server binaries side by side
# in one run (issue 39: a transaction of any size in bounded memory).
#
#   bench/block_memory.sh BEFORE_BIN AFTER_BIN [ROWS [STATEMENTS [KIND]]]
#
# For each binary a fresh server creates t (k bigint PRIMARY KEY, v
# bigint, s text) -- with KIND unique, v bigint UNIQUE; with KIND
# uindex, a unique index on v; with KIND fk, v bigint REFERENCES p, a
# table of ROWS keys loaded first; default plain -- and runs BEGIN, ROWS rows (default 2000000) inserted by
# STATEMENTS INSERT ... SELECT statements (default 20), and COMMIT, under
# the default transaction_spill_memory; the peak RSS is printed at start,
# before the COMMIT and after it, with the times and the final count, and
# at the highest RSS sampled during the block, where the memory was: the
# Go heap in use, heap Go freed but kept, Pebble's block cache.
# Ports are picked free at run time; data under $DIR (default
# /tmp/block-memory: on disk, as the spill is; removed at the end). Needs
# psql and python3.
set -euo pipefail
before=$1 after=$2
rows=${3:-2000000}
stmts=${4:-20}
kind=${5:-plain}
case $kind in
plain) ddl=("CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)") ;;
unique) ddl=("CREATE TABLE t (k bigint PRIMARY KEY, v bigint UNIQUE, s text)") ;;
uindex) ddl=("CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)" "CREATE UNIQUE INDEX t_v ON t (v)") ;;
fk) ddl=("CREATE TABLE p (k bigint PRIMARY KEY)" "INSERT INTO p SELECT generate_series(1, $rows)" "CREATE TABLE t (k bigint PRIMARY KEY, v bigint REFERENCES p, s text)") ;;
*)
	echo "KIND is plain, unique, uindex or fk" >&2
	exit 2
	;;
esac
dir=${DIR:-/tmp/block-memory}
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/memory_lib.sh"

echo "load: $(cat /proc/loadavg) on $(nproc) cores"
echo "a block of $rows rows in $stmts INSERT ... SELECT statements, then COMMIT, into a $kind table"
per=$(((rows + stmts - 1) / stmts))
for bin in "$before" "$after"; do
	rm -rf "$dir/run"
	start "$bin" "$dir/run"
	for stmt in "${ddl[@]}"; do
		psqlq -c "$stmt"
	done
	base=$(hwm)
	{
		echo "BEGIN;"
		for ((from = 1; from <= rows; from += per)); do
			to=$((from + per - 1 < rows ? from + per - 1 : rows))
			echo "INSERT INTO t SELECT g, g, 'row ' || g FROM generate_series($from, $to) g;"
		done
		echo "\\! awk '/VmHWM/ {printf \"before COMMIT %d MiB\\n\", \$2 / 1024}' /proc/$pid/status"
		echo "COMMIT;"
	} >"$dir/block.sql"
	# Where the memory is, sampled every second through the block.
	while kill -0 "$pid" 2>/dev/null; do
		memory
		sleep 1
	done >"$dir/memory.log" 2>/dev/null &
	sampler=$!
	t0=$(date +%s.%N)
	out=$(psqlq -f "$dir/block.sql" 2>&1 | tr '\n' ' ')
	t1=$(date +%s.%N)
	kill "$sampler"
	wait "$sampler" 2>/dev/null || true
	printf '  %-40s at start %-10s %s, after COMMIT %-10s %6.1f s\n' "$bin" "$base" "$out" "$(hwm)" "$(echo "$t1 - $t0" | bc)"
	echo "    at the highest RSS sampled: $(sed 's/.*RSS \([0-9]*\) MiB/\1\t&/' "$dir/memory.log" | sort -n -r | head -1 | cut -f2-)"
	timed "  then SELECT count(*), sum(v)" "SELECT count(*), sum(v) FROM t"
	stop
done
echo "load: $(cat /proc/loadavg)"
