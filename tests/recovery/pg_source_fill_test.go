package recovery

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestPGSourceVolatileDefault adds columns with volatile defaults
// (random(), gen_random_uuid()) to a mirrored table on a real PostgreSQL
// 15: PostgreSQL rewrites the table, giving each existing row a value of
// its own, which logical replication does not send. The mirror must hold
// each row's value as PostgreSQL gave it, also when streamdb crashes
// between adding the column to the mirror and reading the values (fault
// point pgsource-before-fill), and later changes of those rows apply on
// top. The mirror and a view over the new columns equal PostgreSQL's.
func TestPGSourceVolatileDefault(t *testing.T) {
	pg := testutil.StartPostgresLogical(t)
	src := pg.Conn(t)
	testutil.MustExec(t, src,
		"CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)",
		"INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 300) g",
		"CREATE PUBLICATION shop FOR TABLE items")

	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		fmt.Sprintf("CREATE SOURCE shop FROM POSTGRES (CONNECTION '%s', PUBLICATION 'shop') FOR TABLES (public.items)", pg.DSN()))

	equal := func(when, mine, theirs string, floats ...string) {
		t.Helper()
		cols, want := mustQuery(t, src, theirs)
		testutil.Poll(t, 3*time.Minute, when+": "+mine+" to equal the source", func() error {
			gotCols, got, err := queryText(conn, time.Minute, mine)
			if err != nil {
				return err
			}
			if strings.Join(gotCols, ",") != strings.Join(cols, ",") {
				return fmt.Errorf("columns %v, source %v", gotCols, cols)
			}
			if d := diffRows(cols, want, got, floats); d != "" {
				return fmt.Errorf("%d rows, source %d: %s", len(got), len(want), d)
			}
			return nil
		})
	}
	equal("the initial copy", "SELECT * FROM items ORDER BY id", "SELECT * FROM items ORDER BY id")

	// The server dies after the mirror has the columns and before it
	// reads their values.
	srv.SetEnv("STREAMDB_FAULTS=pgsource-before-fill")
	srv.Restart(t)
	testutil.MustExec(t, src,
		"ALTER TABLE items ADD COLUMN n int DEFAULT (random() * 1000000)::int, ADD COLUMN tag uuid DEFAULT gen_random_uuid()",
		"INSERT INTO items (id, name) VALUES (1000, 'added after')")
	testutil.Poll(t, 3*time.Minute, "streamdb to crash at pgsource-before-fill", func() error {
		if srv.Running() {
			return fmt.Errorf("still running")
		}
		return nil
	})
	srv.Kill(t)
	srv.SetEnv()
	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.MustExec(t, src,
		"UPDATE items SET n = -n WHERE id % 10 = 0",
		"DELETE FROM items WHERE id % 7 = 0")
	equal("volatile defaults, across a crash before the fill", "SELECT * FROM items ORDER BY id", "SELECT * FROM items ORDER BY id")

	testutil.MustExec(t, conn, "CREATE MATERIALIZED VIEW tagged AS SELECT sum(n) AS s, count(DISTINCT tag) AS tags, count(*) AS n FROM items")
	equal("a view over the added columns", "SELECT * FROM tagged", "SELECT sum(n) AS s, count(DISTINCT tag) AS tags, count(*) AS n FROM items")

	// Without a crash, and changes in the same transaction as the ADD.
	testutil.MustExec(t, src,
		"BEGIN",
		"ALTER TABLE items ADD COLUMN w float8 DEFAULT random()",
		"UPDATE items SET w = 0.5 WHERE id = 1",
		"COMMIT",
		"INSERT INTO items (id, name) VALUES (1001, 'added later')")
	equal("a float8 volatile default", "SELECT * FROM items ORDER BY id", "SELECT * FROM items ORDER BY id", "w")
	equal("the view after", "SELECT * FROM tagged", "SELECT sum(n) AS s, count(DISTINCT tag) AS tags, count(*) AS n FROM items")
}
