package e2e

import (
	"testing"
)

// TestAlterColumnType: ALTER COLUMN ... TYPE converts the stored rows and
// keeps them converted through a crash (kill -9) and restart; a view
// created afterwards reads the table's whole changelog, written before
// and after the change, under the new type; ROLLBACK TO a savepoint
// taken before the change brings the old type back with its rows.
func TestAlterColumnType(t *testing.T) {
	srv, admin := startWithAdmin(t)
	exec(t, admin,
		"CREATE TABLE t (id int PRIMARY KEY, n int, s varchar(3))",
		"CREATE INDEX t_n ON t (n)",
		"INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'bb'), (3, NULL, NULL)",
		"UPDATE t SET n = 21 WHERE id = 2",
		"SAVEPOINT before_type",
		"ALTER TABLE t ALTER COLUMN n TYPE numeric, ALTER COLUMN s TYPE varchar(10), ALTER COLUMN id TYPE bigint",
		"INSERT INTO t VALUES (5000000000, 1.5, 'longer')",
	)
	srv.Kill(t)
	srv.Restart(t)
	admin = loginAs(t, srv, "streamdb", adminPassword)

	want := []string{"1 10 a", "2 21 bb", "3 NULL NULL", "5000000000 1.5 longer"}
	wantRows(t, admin, "SELECT id, n, s FROM t ORDER BY id", want...)
	wantRows(t, admin, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 't'::regclass AND attnum > 0 ORDER BY attnum",
		"bigint", "numeric", "character varying(10)")
	wantRows(t, admin, "SELECT id FROM t WHERE n = 21.0", "2")
	exec(t, admin, "CREATE MATERIALIZED VIEW tv AS SELECT id, n, s FROM t")
	flush(t, admin)
	wantRows(t, admin, "SELECT id, n, s FROM tv ORDER BY id", want...)

	exec(t, admin, "DROP MATERIALIZED VIEW tv", "ROLLBACK TO SAVEPOINT before_type")
	wantRows(t, admin, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 't'::regclass AND attnum > 0 ORDER BY attnum",
		"integer", "integer", "character varying(3)")
	wantRows(t, admin, "SELECT id, n, s FROM t WHERE id < 10 ORDER BY id", "1 10 a", "2 21 bb", "3 NULL NULL")
}
