package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestCreateViewPreparedAcrossCatalogChange prepares CREATE MATERIALIZED
// VIEW (Parse, which binds its query), changes the table it reads, then
// executes it, on streamdb and on PostgreSQL 15: both create the view over
// the table as it is at Execute (PostgreSQL analyses a prepared statement
// again after a change of what it reads). Executed again after the view is
// dropped, it creates the view again.
func TestCreateViewPreparedAcrossCatalogChange(t *testing.T) {
	srv := startServer(t)
	pg := testutil.StartPostgres(t)
	sides := []struct {
		name string
		conn *pgx.Conn
	}{{"streamdb", srv.Conn(t)}, {"postgres", pg.Conn(t)}}
	results := map[string][][]string{}
	for _, side := range sides {
		conn := side.conn
		ctx := testutil.Context(t, 2*time.Minute)
		exec(t, conn, "CREATE TABLE pv_t (a int PRIMARY KEY)", "INSERT INTO pv_t VALUES (1)")
		if _, err := conn.Prepare(ctx, "mk", "CREATE MATERIALIZED VIEW pv_v AS SELECT * FROM pv_t"); err != nil {
			t.Fatalf("%s: prepare: %v", side.name, err)
		}
		exec(t, conn, "DROP TABLE pv_t", "CREATE TABLE pv_t (a int PRIMARY KEY, b text)", "INSERT INTO pv_t VALUES (2, 'x')")
		if _, err := conn.Exec(ctx, "mk"); err != nil {
			t.Fatalf("%s: execute after the table changed: %v", side.name, err)
		}
		first := textRows(t, conn, "SELECT * FROM pv_v ORDER BY a")
		exec(t, conn, "DROP MATERIALIZED VIEW pv_v", "INSERT INTO pv_t VALUES (3, 'y')")
		if _, err := conn.Exec(ctx, "mk"); err != nil {
			t.Fatalf("%s: execute after the view was dropped: %v", side.name, err)
		}
		second := textRows(t, conn, "SELECT * FROM pv_v ORDER BY a")
		results[side.name] = [][]string{first, second}
	}
	want := [][]string{{"2 x"}, {"2 x", "3 y"}}
	for name, got := range results {
		if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
			t.Errorf("%s: view rows %q, want %q", name, got, want)
		}
	}
}
