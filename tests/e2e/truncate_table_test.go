package e2e

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestTruncateTableChangelog: a table's changelog stays bounded under many
// updates with checkpoints running, while every answer stays PostgreSQL's:
// the table, a view created before the purges and one created after them,
// after ROLLBACK TO SAVEPOINT to a point before purges, after kill -9
// following a purge, and AS OF TIMESTAMP within a table's kept history.
func TestTruncateTableChangelog(t *testing.T) {
	rng := rand.New(rand.NewPCG(testutil.Seed(t, "STREAMDB_TRUNCATE_SEED"), 24))
	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t)
	pc := pg.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())

	const rows = 300
	both := func(sqls ...string) {
		t.Helper()
		exec(t, conn, sqls...)
		exec(t, pc, sqls...)
	}
	exec(t, conn,
		"CREATE TABLE acct (id int PRIMARY KEY, bal bigint, tag text)",
		"CREATE TABLE hist (id int PRIMARY KEY, bal bigint, tag text) WITH (history = '1 hour')")
	exec(t, pc,
		"CREATE TABLE acct (id int PRIMARY KEY, bal bigint, tag text)",
		"CREATE TABLE hist (id int PRIMARY KEY, bal bigint, tag text)")
	var vals []string
	for i := 0; i < rows; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d, 't%d')", i, i*10, i%5))
	}
	both("INSERT INTO acct VALUES "+strings.Join(vals, ", "),
		"INSERT INTO hist VALUES "+strings.Join(vals, ", "))
	exec(t, conn, "CREATE MATERIALIZED VIEW acct_tot AS SELECT tag, count(*) AS n, sum(bal) AS s FROM acct GROUP BY tag")

	const totQuery = "SELECT tag, count(*) AS n, sum(bal) AS s FROM acct GROUP BY tag"
	const byQuery = "SELECT id % 10 AS g, count(*) AS n, sum(bal) AS s, min(tag) AS t FROM acct GROUP BY id % 10"
	same := func(when, ours, theirs string) {
		t.Helper()
		got, want := testutil.SortedRows(t, conn, ours), testutil.SortedRows(t, pc, theirs)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %s\n got %q\nwant %q", when, ours, got, want)
		}
	}
	checkAll := func(when string, byView bool) {
		t.Helper()
		flush(t, conn)
		same(when, "SELECT * FROM acct", "SELECT * FROM acct")
		same(when, "SELECT * FROM hist", "SELECT * FROM hist")
		same(when, "SELECT * FROM acct_tot", totQuery)
		if byView {
			same(when, "SELECT * FROM acct_by", byQuery)
		}
	}
	// Each statement is one changelog message.
	statements := 0
	round := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			var sql string
			switch r := rng.IntN(10); {
			case r < 7:
				sql = fmt.Sprintf("UPDATE {t} SET bal = bal + %d WHERE id = %d", rng.IntN(100)-50, rng.IntN(rows))
			case r < 9:
				sql = fmt.Sprintf("UPDATE {t} SET tag = 't%d' WHERE id %% 13 = %d", rng.IntN(5), rng.IntN(13))
			default:
				id := rng.IntN(rows)
				sql = fmt.Sprintf("DELETE FROM {t} WHERE id = %d", id)
				both(strings.ReplaceAll(sql, "{t}", "acct"), strings.ReplaceAll(sql, "{t}", "hist"))
				sql = fmt.Sprintf("INSERT INTO {t} VALUES (%d, %d, 'back')", id, rng.IntN(1000))
			}
			both(strings.ReplaceAll(sql, "{t}", "acct"), strings.ReplaceAll(sql, "{t}", "hist"))
			statements++
		}
	}
	acctSubject := "streamdb.table.acct"

	markers := 0
	purged := func() {
		t.Helper()
		markers++
		purgePassed(t, conn, js, fmt.Sprint(markers))
	}

	round(400)
	checkAll("first round", false)
	purged()
	// While a new view over a table would replay its changelog from the
	// start, the server keeps every table's changelog whole (and says so);
	// the checks of the purge itself then check that nothing was purged.
	tablesPurged := !strings.Contains(srv.Logs(), "tables' changelogs are kept whole")
	t.Logf("tables' changelogs purged: %v", tablesPurged)
	drained := func(when string) {
		t.Helper()
		if tablesPurged {
			pollDrained(t, js, acctSubject, 0)
			return
		}
		purged()
		if n, first := jsState(t, js, acctSubject); first != 1 {
			t.Fatalf("%s: acct's changelog holds %d messages from %d, want all from 1", when, n, first)
		}
	}
	drained("first round")
	_, kept := jsState(t, js, acctSubject) // the first sequence not purged

	// A savepoint holds the purge back at its position until released.
	exec(t, conn, "SAVEPOINT before_purges")
	round(400)
	checkAll("second round", false)
	asOfWant := testutil.SortedRows(t, pc, "SELECT * FROM hist")
	at := time.Now().UTC()
	round(400)
	checkAll("third round", false)
	purged()
	if _, first := jsState(t, js, acctSubject); first != kept {
		t.Fatalf("acct's changelog starts at %d with a savepoint at %d", first, kept-1)
	}

	// AS OF TIMESTAMP within hist's history: the table exactly as it was.
	got := testutil.SortedRows(t, conn, fmt.Sprintf("SELECT * FROM hist AS OF TIMESTAMP '%s'", at.Format("2006-01-02 15:04:05.999999")))
	if !slices.Equal(got, asOfWant) {
		t.Fatalf("hist AS OF TIMESTAMP %s:\n got %q\nwant %q", at, got, asOfWant)
	}
	// hist keeps its changelog for an hour: nothing of it was purged.
	if _, first := jsState(t, js, "streamdb.table.hist"); first != 1 {
		t.Errorf("hist's changelog starts at sequence %d, want 1 (history = '1 hour')", first)
	}

	// ROLLBACK TO SAVEPOINT to a point before purges: the views restart
	// from the savepoint and the tables replay their changelogs to the end.
	exec(t, conn, "ROLLBACK TO SAVEPOINT before_purges")
	checkAll("after ROLLBACK TO SAVEPOINT", false)
	exec(t, conn, "RELEASE SAVEPOINT before_purges")
	drained("after RELEASE SAVEPOINT")

	// A view created after the purges is exact.
	exec(t, conn, "CREATE MATERIALIZED VIEW acct_by AS "+byQuery)
	checkAll("view created after purges", true)

	// kill -9 after a purge.
	round(300)
	drained("before kill -9")
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	checkAll("after kill -9", true)
	round(200)
	checkAll("after restart and more updates", true)
	drained("after restart")
	t.Logf("%d statements over %d rows", statements, rows)
}
