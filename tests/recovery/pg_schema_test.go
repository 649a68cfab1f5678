package recovery

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestPGSourceColumnChanges changes the columns of a mirrored table on a
// real PostgreSQL while its source runs: columns added (with a constant
// default, which rows written before hold, and without) and dropped reach
// the mirror, which equals the source table row by row after each change
// and after a kill -9 of streamdb, while views over other columns keep
// running. Dropping a column a view reads, and changing a column's type,
// stop the source in an error state that streamdb_sources shows, with the
// mirror kept as it was; dropping the view lets the source go on.
func TestPGSourceColumnChanges(t *testing.T) {
	pg := testutil.StartPostgresLogical(t)
	src := pg.Conn(t)
	testutil.MustExec(t, src,
		"CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, qty int)",
		"INSERT INTO items SELECT g, 'item ' || g, g % 7 FROM generate_series(1, 50) g",
		"CREATE PUBLICATION shop FOR TABLE items")

	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		fmt.Sprintf("CREATE SOURCE shop FROM POSTGRES (CONNECTION '%s', PUBLICATION 'shop') FOR TABLES (public.items)", pg.DSN()),
		"CREATE MATERIALIZED VIEW names AS SELECT id, name FROM items",
		"CREATE MATERIALIZED VIEW total AS SELECT sum(qty) AS qty, count(*) AS n FROM items")

	equal := func(when, mine, theirs string) {
		t.Helper()
		cols, want := mustQuery(t, src, theirs)
		testutil.Poll(t, 2*time.Minute, when+": "+mine+" to equal the source", func() error {
			gotCols, got, err := queryText(conn, time.Minute, mine)
			if err != nil {
				return err
			}
			if strings.Join(gotCols, ",") != strings.Join(cols, ",") {
				return fmt.Errorf("columns %v, source %v", gotCols, cols)
			}
			if d := diffRows(cols, want, got, nil); d != "" {
				return fmt.Errorf("%d rows, source %d: %s", len(got), len(want), d)
			}
			return nil
		})
	}
	same := func(when string) {
		t.Helper()
		equal(when, "SELECT * FROM items ORDER BY id", "SELECT * FROM items ORDER BY id")
		equal(when, "SELECT * FROM total", "SELECT sum(qty) AS qty, count(*) AS n FROM items")
	}
	same("the initial copy")

	testutil.MustExec(t, src,
		"ALTER TABLE items ADD COLUMN color text DEFAULT 'red'",
		"INSERT INTO items SELECT g, 'item ' || g, g % 5, 'blue' FROM generate_series(51, 80) g",
		"UPDATE items SET color = 'green', qty = qty + 1 WHERE id % 10 = 0")
	same("ADD COLUMN with a default")
	equal("ADD COLUMN with a default", "SELECT * FROM names ORDER BY id", "SELECT id, name FROM items ORDER BY id")

	testutil.MustExec(t, src,
		"ALTER TABLE items ADD COLUMN weight numeric(8,2)",
		"BEGIN", "UPDATE items SET weight = id * 1.5 WHERE id % 3 = 0", "DELETE FROM items WHERE id % 11 = 0", "COMMIT")
	same("ADD COLUMN without a default")

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.MustExec(t, src, "INSERT INTO items VALUES (200, 'after restart', 1, 'black', 2.5)")
	same("kill -9 and restart of streamdb")

	testutil.MustExec(t, src, "ALTER TABLE items DROP COLUMN color",
		"INSERT INTO items VALUES (201, 'no color', 2, 3.5)")
	same("DROP COLUMN")

	// A dropped column a view reads: the source stops, the mirror stays.
	before := testutil.Scalar(t, conn, "SELECT count(*) FROM items")
	testutil.MustExec(t, src, "ALTER TABLE items DROP COLUMN name", "INSERT INTO items VALUES (202, 3, 4.5)")
	errorState := func(when, want string) {
		t.Helper()
		testutil.Poll(t, 2*time.Minute, when+": the source to show an error", func() error {
			status := testutil.Scalar(t, conn, "SELECT status FROM streamdb_sources")
			if !strings.HasPrefix(status, "error: ") || !strings.Contains(status, want) {
				return fmt.Errorf("status %q", status)
			}
			return nil
		})
		if n := testutil.Scalar(t, conn, "SELECT count(*) FROM items"); n != before {
			t.Errorf("%s: the mirror has %s rows, want the %s it had", when, n, before)
		}
	}
	errorState("DROP COLUMN a view reads", "names")
	testutil.MustExec(t, conn, "DROP MATERIALIZED VIEW names")
	same("DROP COLUMN once the view that read it is gone")
	if status := testutil.Scalar(t, conn, "SELECT status FROM streamdb_sources"); strings.HasPrefix(status, "error") {
		t.Errorf("status after the source went on: %q", status)
	}

	before = testutil.Scalar(t, conn, "SELECT count(*) FROM items")
	testutil.MustExec(t, src, "ALTER TABLE items ALTER COLUMN qty TYPE bigint", "INSERT INTO items VALUES (203, 5, 5.5)")
	errorState("ALTER COLUMN TYPE", "changed type")
	equal("ALTER COLUMN TYPE", "SELECT * FROM total", "SELECT sum(qty) AS qty, count(*) AS n FROM items WHERE id <> 203")
}
