package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// resultTypes returns the type OIDs of a query's columns.
func resultTypes(t *testing.T, conn *pgx.Conn, sql string) []uint32 {
	t.Helper()
	rows, err := conn.Query(testutil.Context(t, 30*time.Second), sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var oids []uint32
	for _, fd := range rows.FieldDescriptions() {
		oids = append(oids, fd.DataTypeOID)
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return oids
}

// TestAggregateTypesAndSpecials: sum, avg and count have PostgreSQL's
// result types in a view (sum(int2/int4) bigint, sum(int8) numeric, ...)
// and its values, also as rows holding NaN and the infinities come and
// go: a view over a table, whose deletes retract them, shows what
// PostgreSQL computes over the same table after each statement.
func TestAggregateTypesAndSpecials(t *testing.T) {
	pg := testutil.StartPostgres(t).Conn(t)
	srv := startServer(t)
	conn := srv.Conn(t)
	const table = "CREATE TABLE v (id int PRIMARY KEY, i2 smallint, i4 int, i8 bigint, n numeric, f4 real, f8 double precision, iv interval)"
	const aggs = "sum(i2) AS a, sum(i4) AS b, sum(i8) AS c, sum(n) AS d, sum(f4) AS e, sum(f8) AS f, sum(iv) AS g, avg(i2) AS h, avg(i4) AS i, avg(i8) AS j, avg(n) AS k, avg(f4) AS l, avg(f8) AS m, count(i8) AS o, count(*) AS p"
	exec(t, pg, table)
	exec(t, conn, table, "CREATE MATERIALIZED VIEW va AS SELECT "+aggs+" FROM v")
	if got, want := resultTypes(t, conn, "SELECT * FROM va"), resultTypes(t, pg, "SELECT "+aggs+" FROM v"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("result types %v, PostgreSQL's %v", got, want)
	}
	steps := []string{
		"INSERT INTO v VALUES (1, 32767, 2147483647, 9223372036854775807, 1e30, 1.5, 1e300, '178956970 years')",
		"INSERT INTO v VALUES (2, 32767, 2147483647, 9223372036854775807, 0.000000000001, 2.5, 1e300, '-1 year')",
		"INSERT INTO v VALUES (3, 1, 1, 1, 'Infinity', 'Infinity', 'Infinity', '1 day')",
		"INSERT INTO v VALUES (4, -1, -1, -1, '-Infinity', '-Infinity', '-Infinity', '1 hour')",
		"DELETE FROM v WHERE id = 3",
		"INSERT INTO v VALUES (5, 0, 0, 0, 'NaN', 'NaN', 'NaN', '0')",
		"DELETE FROM v WHERE id IN (4, 5)",
	}
	for _, st := range steps {
		exec(t, pg, st)
		exec(t, conn, st, "FLUSH")
		want := textRows(t, pg, "SELECT "+aggs+" FROM v")
		wantRows(t, conn, "SELECT * FROM va", want...)
	}
}

// TestAggregateOverflowInView: a row that would make a sum leave its
// type's range, or whose integer arithmetic overflows, is an error of
// that row, with PostgreSQL's SQLSTATE and message for the same values:
// the view skips it (the sums stay as before it) and lists it in
// streamdb_view_errors, or stops WITH (on_error = 'fail'). Nothing wraps
// or saturates.
func TestAggregateOverflowInView(t *testing.T) {
	pg := testutil.StartPostgres(t).Conn(t)
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE STREAM o (id int, i4 int, f8 double precision, f4 real, iv interval)",
		"CREATE MATERIALIZED VIEW doubled AS SELECT id, i4 + i4 AS d FROM o",
		"CREATE MATERIALIZED VIEW sums AS SELECT sum(f8) AS f8, sum(f4) AS f4, sum(iv) AS iv, count(*) AS n FROM o",
		"CREATE MATERIALIZED VIEW strict WITH (on_error = 'fail') AS SELECT sum(f8) AS f8 FROM o",
		"INSERT INTO o VALUES (1, 1073741823, 1e308, 3e38, '178956970 years')",
		"INSERT INTO o VALUES (2, 1073741824, 1e308, 1, '1 day')",
		"INSERT INTO o VALUES (3, -1073741824, 1, 3e38, '1 day')",
		"INSERT INTO o VALUES (4, 5, -1, 1, '1 year')",
		"FLUSH")
	// PostgreSQL on the same values.
	pgErr := func(sql string) string {
		t.Helper()
		err := queryErr(t, pg, sql)
		if err == nil {
			t.Fatalf("PostgreSQL: %s succeeds", sql)
		}
		pe := pgError(t, err)
		return pe.Code + " " + pe.Message
	}
	intErr := pgErr("SELECT 1073741824::int + 1073741824::int")
	f8Err := pgErr("SELECT sum(x) FROM (VALUES (1e308::float8), (1e308::float8)) t(x)")
	f4Err := pgErr("SELECT sum(x) FROM (VALUES (3e38::real), (3e38::real)) t(x)")
	ivErr := pgErr("SELECT sum(x) FROM (VALUES (interval '178956970 years'), (interval '1 year')) t(x)")

	wantRows(t, conn, "SELECT id, d FROM doubled ORDER BY id", "1 2147483646", "3 -2147483648", "4 10")
	// Row 2 overflows sum(f8), row 3 sum(f4), row 4 sum(iv): each is
	// skipped whole (none of its values is added, nor is it counted).
	wantRows(t, conn, "SELECT f8, f4, iv, n FROM sums", "1e+308 3e+38 178956970 years 1")
	wantRows(t, conn, "SELECT view, sqlstate || ' ' || error FROM streamdb_view_errors WHERE view IN ('doubled', 'sums') ORDER BY view, at",
		"doubled "+intErr, "sums "+f8Err, "sums "+f4Err, "sums "+ivErr)
	_, err := textRowsErr(testutil.Context(t, 30*time.Second), conn, "SELECT * FROM strict")
	wantCode(t, err, "22003")
}
