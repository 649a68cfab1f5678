package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestLongSourceNames uses PostgreSQL's longest identifier (63 bytes) for
// a stream, a table and a view over both: writes, reads, a restart, SHOW
// and the streamdb_* tables must all work with the whole names, and the
// names streamdb derives from them (the primary key) must fit in 63
// bytes as PostgreSQL's do.
func TestLongSourceNames(t *testing.T) {
	st, tb, vw := strings.Repeat("s", 63), strings.Repeat("t", 63), strings.Repeat("v", 63)
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		fmt.Sprintf("CREATE STREAM %s (k bigint, v bigint) WITH (subject = 'e2e.long')", st),
		fmt.Sprintf("CREATE TABLE %s (k bigint PRIMARY KEY, v bigint)", tb),
		fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS SELECT s.k, s.v + coalesce(t.v, 0) AS w FROM %s s LEFT JOIN %s t ON s.k = t.k", vw, st, tb),
		fmt.Sprintf("INSERT INTO %s VALUES (1, 10), (2, 20)", st),
		fmt.Sprintf("INSERT INTO %s VALUES (1, 100)", tb),
	)
	wantRows(t, conn, "SELECT * FROM "+vw+" ORDER BY k", "1 110", "2 20")
	wantRows(t, conn, "SELECT conname FROM pg_constraint WHERE conrelid = '"+tb+"'::regclass", strings.Repeat("t", 58)+"_pkey")

	srv.Restart(t)
	conn = srv.Conn(t)
	exec(t, conn,
		fmt.Sprintf("INSERT INTO %s VALUES (3, 30)", st),
		fmt.Sprintf("INSERT INTO %s VALUES (2, 200)", tb),
	)
	wantRows(t, conn, "SELECT * FROM "+vw+" ORDER BY k", "1 110", "2 220", "3 30")
	for _, c := range []struct{ show, want string }{{"SHOW STREAMS", st}, {"SHOW TABLES", tb}, {"SHOW MATERIALIZED VIEWS", vw}} {
		rows := textRows(t, conn, c.show)
		if len(rows) != 1 || strings.Fields(rows[0])[0] != c.want {
			t.Errorf("%s: %q, want one row of %s", c.show, rows, c.want)
		}
	}
	wantRows(t, conn, "SELECT object, reads FROM streamdb_dependencies ORDER BY reads", vw+" "+st, vw+" "+tb)
	wantRows(t, conn, "SELECT DISTINCT object FROM streamdb_state ORDER BY object", tb, vw)
	wantRows(t, conn, "SELECT DISTINCT view FROM streamdb_operators ORDER BY view", tb, vw)
}

// TestLongIdentifiersTruncated: an identifier longer than 63 bytes,
// quoted or not, is cut to 63 bytes (at a character boundary) with
// PostgreSQL's NOTICE (42622), in CREATE and in references, so that
// any spelling with the same first 63 bytes names the same object.
func TestLongIdentifiersTruncated(t *testing.T) {
	srv := startServer(t)
	var mu sync.Mutex
	var notices []string
	cfg, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		notices = append(notices, n.Code+" "+n.Message)
		mu.Unlock()
	}
	conn, err := pgx.ConnectConfig(testutil.Context(t, 30*time.Second), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	takeNotices := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := notices
		notices = nil
		return out
	}

	long, cut := strings.Repeat("t", 70), strings.Repeat("t", 63)
	col, colCut := "C"+strings.Repeat("o", 69), "c"+strings.Repeat("o", 62)
	exec(t, conn, fmt.Sprintf("CREATE TABLE %s (k int PRIMARY KEY, %s int)", long, col))
	want := []string{
		fmt.Sprintf(`42622 identifier "%s" will be truncated to "%s"`, long, cut),
		fmt.Sprintf(`42622 identifier "%s" will be truncated to "%s"`, strings.ToLower(col), colCut),
	}
	if got := takeNotices(); !slices.Equal(got, want) {
		t.Errorf("CREATE TABLE notices:\n got %q\nwant %q", got, want)
	}
	wantRows(t, conn, "SELECT relname FROM pg_class WHERE relname LIKE 'ttt%' AND relkind = 'r'", cut)
	wantRows(t, conn, "SELECT column_name FROM information_schema.columns WHERE table_name = '"+cut+"' ORDER BY ordinal_position", "k", colCut)

	// Another spelling with the same first 63 bytes is the same table.
	other := cut + "_other_tail"
	exec(t, conn, fmt.Sprintf("INSERT INTO %s (k, %s) VALUES (1, 10)", other, colCut+"xyz"))
	wantRows(t, conn, fmt.Sprintf("SELECT k, %s FROM %s", colCut, cut), "1 10")
	wantRows(t, conn, fmt.Sprintf(`SELECT k, "%s" FROM "%s"`, colCut+"Q", long), "1 10")
	wantExecCode(t, conn, fmt.Sprintf("CREATE TABLE %s (k int PRIMARY KEY)", other), "42P07")
	takeNotices()

	// A quoted name is cut too, never in the middle of a character: 40
	// two-byte characters are cut to 31 (62 bytes).
	wide := strings.Repeat("é", 40)
	exec(t, conn, fmt.Sprintf(`CREATE VIEW "%s" AS SELECT k FROM %s`, wide, cut))
	want = []string{fmt.Sprintf(`42622 identifier "%s" will be truncated to "%s"`, wide, strings.Repeat("é", 31))}
	if got := takeNotices(); !slices.Equal(got, want) {
		t.Errorf("CREATE VIEW notices:\n got %q\nwant %q", got, want)
	}
	wantRows(t, conn, fmt.Sprintf(`SELECT k FROM "%s"`, strings.Repeat("é", 31)), "1")

	// A view's query keeps its text as written: it is cut the same way
	// when the view is read, after a restart too.
	exec(t, conn, fmt.Sprintf("CREATE VIEW long_reader AS SELECT %s AS v FROM %s", col, long))
	srv.Restart(t)
	conn2 := srv.Conn(t)
	wantRows(t, conn2, "SELECT v FROM long_reader", "10")
	wantRows(t, conn2, fmt.Sprintf("SELECT count(*) FROM %s", other), "1")
}
