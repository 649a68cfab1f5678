#!/usr/bin/env bash
# Time of DDL round trips for two server binaries side by side in one
# run (issue 44: moving DDL's apply into meta must not slow it down).
#
#   bench/ddl_cycle.sh BEFORE_BIN AFTER_BIN [ROUNDS [REPEATS]]
#
# For each binary, REPEATS times (default 2, alternating the binaries so
# that a change of the machine's load hits both), a fresh server runs
# ROUNDS (default 200) rounds of CREATE TABLE t (k bigint PRIMARY KEY,
# v bigint, s serial), CREATE INDEX on v, CREATE SEQUENCE q, ALTER
# SEQUENCE q RESTART, DROP SEQUENCE q and DROP TABLE t, in one psql
# session; each statement checkpoints the catalog. Prints the load, and
# the seconds and statements per second of each run. Ports are picked
# free at run time; data under $DIR (default /tmp/ddl-cycle, removed at
# the end). Needs psql and python3.
set -euo pipefail
before=$1 after=$2
rounds=${3:-200}
repeats=${4:-2}
dir=${DIR:-/tmp/ddl-cycle}
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/memory_lib.sh"

for ((i = 1; i <= rounds; i++)); do
	echo "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s serial);"
	echo "CREATE INDEX t_v ON t (v);"
	echo "CREATE SEQUENCE q;"
	echo "ALTER SEQUENCE q INCREMENT 2 RESTART;"
	echo "DROP SEQUENCE q;"
	echo "DROP TABLE t;"
done >"$dir/cycle.sql"
stmts=$((rounds * 6))

echo "load: $(cat /proc/loadavg) on $(nproc) cores"
echo "$rounds rounds of CREATE TABLE, CREATE INDEX, CREATE/ALTER/DROP SEQUENCE, DROP TABLE ($stmts statements)"
for ((r = 1; r <= repeats; r++)); do
	for bin in "$before" "$after"; do
		rm -rf "$dir/run"
		start "$bin" "$dir/run"
		t0=$(date +%s.%N)
		psqlq -v ON_ERROR_STOP=1 -f "$dir/cycle.sql" >/dev/null
		t1=$(date +%s.%N)
		stop
		secs=$(echo "$t1 - $t0" | bc)
		printf '  %-40s %7.1f s  %6.1f statements/s  (load %s)\n' "$bin" "$secs" "$(echo "$stmts / $secs" | bc -l)" "$(cut -d' ' -f1 /proc/loadavg)"
	done
done
