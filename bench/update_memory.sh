#!/usr/bin/env bash
# Peak RSS (VmHWM) of the server for large writes, for two server binaries
# side by side in one run (issue 39: writes of any size in bounded
# memory): an UPDATE and a DELETE whose WHERE pins no key, and an INSERT
# ... SELECT with ON CONFLICT DO NOTHING into a table with a UNIQUE
# column.
#
#   [CASES="update unique fk cascade diamond insert plain_insert upsert block pk keyless selfref fkmove keylessfk uniqueref"] bench/update_memory.sh BEFORE_BIN AFTER_BIN [ROWS...]
#
# For each size in ROWS (default 2000000):
# - update: a table (k bigint PRIMARY KEY, v bigint, s text) of that many
#   rows is loaded once by COPY (with AFTER_BIN) and its data directory
#   copied; then for each statement and each binary a server is started on
#   a fresh copy (VmHWM only grows, so each statement gets a server of its
#   own), the statement runs, and the peak RSS at start and after it is
#   printed with the statement's time and answer.
# - unique: the same on (k bigint PRIMARY KEY, v bigint, u bigint UNIQUE,
#   s text), with UPDATE t SET u = u + 1, v = v + 1 too (every row moves
#   onto the value its neighbour lets go);
# - fk: (k bigint PRIMARY KEY, v bigint, s text) referenced by a table of
#   half as many rows (indexed on the reference): a DELETE of the half
#   nobody references, and an UPDATE of every referencing row;
# - diamond: t referenced by l (CASCADE) and b referencing l (CASCADE)
#   and t (SET NULL), of as many rows each, indexed: a DELETE of half of
#   t (actions that do not form a tree);
# - cascade: t (k bigint PRIMARY KEY, v bigint, s text) referenced by c
#   of as many rows ON DELETE CASCADE and by n of as many ON DELETE SET
#   NULL (both indexed on the reference), each child referencing the key
#   of its own number: a DELETE of half of t, whose children go or are
#   set to NULL in the same commit;
# - insert: for each binary, a server on an empty data directory creates
#   (k bigint PRIMARY KEY, u bigint UNIQUE, s text) and inserts that many
#   rows from generate_series with ON CONFLICT DO NOTHING, printed alike;
# - plain_insert: the same rows into (k bigint PRIMARY KEY, u bigint, s
#   text) without ON CONFLICT, the streaming path without unique keys;
# - upsert: (k bigint PRIMARY KEY, v bigint, s text) holding half that
#   many rows (loaded by COPY, as for update), then an INSERT ... SELECT
#   of all of them with ON CONFLICT (k) DO UPDATE: half updates, half
#   inserts.
# - block: the update case's table and statements inside a transaction
#   block (BEGIN; ...; COMMIT in one query string), the block's changes
#   spilling past transaction_spill_memory (its default), plus a block
#   that updates every row twice, and one whose second UPDATE has a
#   subquery over the table (it reads the block's first UPDATE).
# - pk: the table of update, with UPDATEs that assign the primary key:
#   every row onto a free key (k + N, -k), and onto the key of the next
#   row (k + 1: every row waits for its neighbour to let its key go);
# - selfref: as insert, into (k bigint PRIMARY KEY, u bigint REFERENCES
#   t, s text), each row referencing the next;
# - keyless: (k bigint, v bigint, u bigint UNIQUE, s text) without a
#   primary key: UPDATE of half the rows (v only), of every row's u onto
#   its neighbour's, and a DELETE of half.
# - fkmove: the table of update referenced (NO ACTION, indexed) by c of
#   a tenth as many rows, each referencing a key 10 * i - 5: UPDATEs that
#   move every primary key onto the key the row before it let go (k - 1)
#   and the row after it lets go later (k + 1), every referenced key
#   taken again;
# - keylessfk: (k bigint, v bigint, s text) without a primary key,
#   referencing p (k bigint PRIMARY KEY) of one more row: an UPDATE of
#   every reference onto the next key, and a DELETE of half;
# - uniqueref: (k bigint PRIMARY KEY, v bigint, u bigint UNIQUE, s text)
#   referenced by its u by c of a tenth as many rows: an UPDATE moving
#   every u but the last onto the value the row before let go, and a
#   DELETE of the rows nobody references.
# Ports are picked free at run time; data under $DIR (default
# /dev/shm/update-memory, removed at the end). Needs psql and python3.
set -euo pipefail
before=$1 after=$2
shift 2
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(2000000)
dir=${DIR:-/dev/shm/update-memory}
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/memory_lib.sh"

# changed_case rows ddl copy-columns statements...: a table of that many
# rows, made by ddl and loaded once by COPY (with AFTER_BIN) of the
# columns copy-columns prints for each row number ($1 in awk), then each
# statement on a server of its own started on a fresh copy, for each
# binary. The statements in the array setup run after the load.
setup=()
changed_case() {
	local n=$1 ddl=$2 cols=$3
	shift 3
	echo
	echo "a table of $n rows ($ddl), loaded by COPY"
	rm -rf "$dir/loaded" "$dir/rows.tsv"
	seq 1 "$n" | awk "{print $cols}" >"$dir/rows.tsv"
	start "$after" "$dir/loaded"
	psqlq -c "$ddl"
	psqlq -c "\\copy t FROM '$dir/rows.tsv'"
	psqlq -c "SELECT count(*) FROM t" >/dev/null
	for stmt in "${setup[@]}"; do
		psqlq -c "$stmt"
	done
	stop
	rm -f "$dir/rows.tsv"
	for q in "$@"; do
		echo " $q  (peak RSS of a server started for it)"
		for bin in "$before" "$after"; do
			rm -rf "$dir/run"
			cp -a "$dir/loaded" "$dir/run"
			start "$bin" "$dir/run"
			base=$(hwm)
			timed "$bin (at start: $base)" "$q"
			timed "  then ${answer:-SELECT count(*), sum(v) FROM t}" "${answer:-SELECT count(*), sum(v) FROM t}"
			stop
		done
	done
}
update_case() {
	changed_case "$1" "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)" '$1 "\t" $1 "\trow " $1' \
		"UPDATE t SET v = v + 1 WHERE v % 2 = 0" "DELETE FROM t WHERE v % 2 = 0"
}
# unique: the same statements on a table with a UNIQUE column, and an
# UPDATE that moves every row onto its neighbour's value of it.
unique_case() {
	changed_case "$1" "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, u bigint UNIQUE, s text)" '$1 "\t" $1 "\t" $1 "\trow " $1' \
		"UPDATE t SET v = v + 1 WHERE v % 2 = 0" "UPDATE t SET u = u + 1, v = v + 1" "DELETE FROM t WHERE v % 2 = 0"
}
# fk: t (k bigint PRIMARY KEY, v bigint, s text) referenced by c (k
# bigint PRIMARY KEY, p bigint REFERENCES t, s text, indexed on p) of
# half as many rows, each referencing an odd key of t: a DELETE of t's
# rows nobody references, and an UPDATE of every child onto another key.
fk_case() {
	setup=("CREATE TABLE c (k bigint PRIMARY KEY, p bigint REFERENCES t, s text)" "CREATE INDEX c_p ON c (p)"
		"INSERT INTO c SELECT g, 2 * g - 1, 'child' FROM generate_series(1, $1 / 2) g")
	changed_case "$1" "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)" '$1 "\t" $1 "\trow " $1' \
		"DELETE FROM t WHERE v % 2 = 0" "UPDATE c SET p = $1 - p"
	setup=()
}
# cascade: a DELETE of half of t, each deleted row's child in c deleted
# (ON DELETE CASCADE) and its child in n set to NULL (SET NULL).
cascade_case() {
	setup=("CREATE TABLE c (k bigint PRIMARY KEY, p bigint REFERENCES t ON DELETE CASCADE, s text)" "CREATE INDEX c_p ON c (p)"
		"CREATE TABLE n (k bigint PRIMARY KEY, p bigint REFERENCES t ON DELETE SET NULL, s text)" "CREATE INDEX n_p ON n (p)"
		"INSERT INTO c SELECT g, g, 'child' FROM generate_series(1, $1) g"
		"INSERT INTO n SELECT g, g, 'child' FROM generate_series(1, $1) g")
	answer="SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM c), (SELECT count(p) FROM n)"
	changed_case "$1" "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)" '$1 "\t" $1 "\trow " $1' \
		"DELETE FROM t WHERE v % 2 = 0"
	setup=() answer=""
}
# diamond: a DELETE of half of t whose actions do not form a tree: l
# references t (CASCADE) and b references both l (CASCADE) and t (SET
# NULL), each b row the t row at the other end of the table; the
# statement reads l and b through its overlay on disk.
diamond_case() {
	setup=("CREATE TABLE l (k bigint PRIMARY KEY, p bigint REFERENCES t ON DELETE CASCADE)" "CREATE INDEX l_p ON l (p)"
		"CREATE TABLE b (k bigint PRIMARY KEY, l bigint REFERENCES l ON DELETE CASCADE, p bigint REFERENCES t ON DELETE SET NULL, s text)"
		"CREATE INDEX b_l ON b (l)" "CREATE INDEX b_p ON b (p)"
		"INSERT INTO l SELECT g, g FROM generate_series(1, $1) g"
		"INSERT INTO b SELECT g, g, $1 + 1 - g, 'child' FROM generate_series(1, $1) g")
	answer="SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM l), (SELECT count(*) FROM b), (SELECT count(p) FROM b)"
	changed_case "$1" "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)" '$1 "\t" $1 "\trow " $1' \
		"DELETE FROM t WHERE v % 2 = 0"
	setup=() answer=""
}

# pk: UPDATEs that move every row to a new primary key.
pk_case() {
	changed_case "$1" "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)" '$1 "\t" $1 "\trow " $1' \
		"UPDATE t SET k = k + $1" "UPDATE t SET k = -k" "UPDATE t SET k = k + 1"
}
# keyless: a table without a primary key and with a UNIQUE column.
keyless_case() {
	changed_case "$1" "CREATE TABLE t (k bigint, v bigint, u bigint UNIQUE, s text)" '$1 "\t" $1 "\t" $1 "\trow " $1' \
		"UPDATE t SET v = v + 1 WHERE v % 2 = 0" "UPDATE t SET u = u + 1, v = v + 1" "DELETE FROM t WHERE v % 2 = 0"
}

# fkmove: UPDATEs moving the primary keys of a referenced table.
fkmove_case() {
	setup=("CREATE TABLE c (k bigint PRIMARY KEY, p bigint REFERENCES t, s text)" "CREATE INDEX c_p ON c (p)"
		"INSERT INTO c SELECT g, 10 * g - 5, 'child' FROM generate_series(1, $1 / 10) g")
	changed_case "$1" "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)" '$1 "\t" $1 "\trow " $1' \
		"UPDATE t SET k = k - 1" "UPDATE t SET k = k + 1 WHERE v > 0"
	setup=()
}
# keylessfk: a table without a primary key referencing another.
keylessfk_case() {
	setup=("CREATE TABLE p (k bigint PRIMARY KEY)" "INSERT INTO p SELECT generate_series(1, $1 + 1)"
		"ALTER TABLE t ADD FOREIGN KEY (k) REFERENCES p")
	changed_case "$1" "CREATE TABLE t (k bigint, v bigint, s text)" '$1 "\t" $1 "\trow " $1' \
		"UPDATE t SET k = k + 1" "DELETE FROM t WHERE v % 2 = 0"
	setup=()
}
# uniqueref: a table referenced by a UNIQUE column besides its key.
uniqueref_case() {
	setup=("CREATE TABLE c (k bigint PRIMARY KEY, u bigint REFERENCES t (u), s text)" "CREATE INDEX c_u ON c (u)"
		"INSERT INTO c SELECT g, 10 * g, 'child' FROM generate_series(1, $1 / 10) g")
	changed_case "$1" "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, u bigint UNIQUE, s text)" '$1 "\t" $1 "\t" $1 "\trow " $1' \
		"UPDATE t SET u = u - 1 WHERE v < $1" "DELETE FROM t WHERE v % 10 <> 0"
	setup=()
}

insert_into() { # rows table-columns on-conflict [select-list]
	local n=$1 q
	q="INSERT INTO t SELECT ${4:-g, g, 'row ' || g} FROM generate_series(1, $n) g $3"
	echo
	echo " $q"
	echo "  into an empty t ($2)  (peak RSS of a server started for it)"
	for bin in "$before" "$after"; do
		rm -rf "$dir/run"
		start "$bin" "$dir/run"
		psqlq -c "CREATE TABLE t ($2)"
		base=$(hwm)
		timed "$bin (at start: $base)" "$q"
		timed "  then SELECT count(*), sum(u)" "SELECT count(*), sum(u) FROM t"
		stop
	done
}
insert_case() { insert_into "$1" "k bigint PRIMARY KEY, u bigint UNIQUE, s text" "ON CONFLICT DO NOTHING"; }
upsert_case() {
	local n=$1
	changed_case "$((n / 2))" "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)" '$1 "\t" $1 "\trow " $1' \
		"INSERT INTO t SELECT g, g, 'new ' || g FROM generate_series(1, $n) g ON CONFLICT (k) DO UPDATE SET v = t.v + excluded.v, s = excluded.s"
}
block_case() {
	changed_case "$1" "CREATE TABLE t (k bigint PRIMARY KEY, v bigint, s text)" '$1 "\t" $1 "\trow " $1' \
		"BEGIN; UPDATE t SET v = v + 1 WHERE v % 2 = 0; COMMIT" "BEGIN; DELETE FROM t WHERE v % 2 = 0; COMMIT" \
		"BEGIN; UPDATE t SET v = v + 1; UPDATE t SET v = v + 1; COMMIT" \
		"BEGIN; UPDATE t SET v = v + 1 WHERE v % 2 = 0; UPDATE t SET v = v + (SELECT max(v) FROM t) WHERE v % 2 = 1; COMMIT"
}
# selfref: into a table whose foreign key references its own primary
# key, each row referencing the next one (the last the first).
selfref_case() { insert_into "$1" "k bigint PRIMARY KEY, u bigint REFERENCES t, s text" "" "g, g % $1 + 1, 'row ' || g"; }
plain_insert_case() { insert_into "$1" "k bigint PRIMARY KEY, u bigint, s text" ""; }

echo "load: $(cat /proc/loadavg) on $(nproc) cores"
for n in "${sizes[@]}"; do
	for c in ${CASES:-update unique fk cascade diamond insert plain_insert upsert block pk keyless selfref fkmove keylessfk uniqueref}; do
		"${c}_case" "$n"
	done
	echo "load: $(cat /proc/loadavg)"
done
