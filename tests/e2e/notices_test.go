package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// noticeConn connects to dsn and collects the NOTICEs it receives; take
// returns those received since its last call, each as "message" or
// "message | detail".
func noticeConn(t *testing.T, dsn string) (conn *pgx.Conn, take func() []string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notices []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		s := n.Message
		if n.Detail != "" {
			s += " | " + n.Detail
		}
		mu.Lock()
		notices = append(notices, s)
		mu.Unlock()
	}
	conn, err = pgx.ConnectConfig(testutil.Context(t, time.Minute), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(testutil.Context(t, 10*time.Second)) })
	return conn, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := notices
		notices = nil
		return out
	}
}

// TestDropCascadeNotices checks that DROP ... CASCADE names what it drops
// besides its target as PostgreSQL 15 does: the one object in the
// NOTICE, or a count with one object per line of the detail. The same
// statements run on a real PostgreSQL give the expected notices.
func TestDropCascadeNotices(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := startServer(t)
	sdb, sdbNotices := noticeConn(t, srv.DSN())
	pgc, pgNotices := noticeConn(t, pg.DSN())

	steps := []struct {
		sql  string
		want []string // the notices PostgreSQL sends (checked below too)
	}{
		{"CREATE TABLE t (k int PRIMARY KEY, v int)", nil},
		{"CREATE MATERIALIZED VIEW a AS SELECT k, v FROM t", nil},
		{"DROP TABLE t CASCADE", []string{"drop cascades to materialized view a"}},
		{"CREATE TABLE t (k int PRIMARY KEY, v int)", nil},
		{"CREATE MATERIALIZED VIEW a AS SELECT k, v FROM t", nil},
		{"CREATE MATERIALIZED VIEW b AS SELECT k FROM a", nil},
		{"CREATE MATERIALIZED VIEW c AS SELECT v FROM t", nil},
		{"DROP MATERIALIZED VIEW b CASCADE", nil},
		{"CREATE MATERIALIZED VIEW b AS SELECT k FROM a", nil},
		{"DROP TABLE t CASCADE", []string{"drop cascades to 3 other objects | drop cascades to materialized view a\n" +
			"drop cascades to materialized view b\ndrop cascades to materialized view c"}},
	}
	for _, s := range steps {
		exec(t, sdb, s.sql)
		exec(t, pgc, s.sql)
		got, fromPG := sdbNotices(), pgNotices()
		if strings.Join(fromPG, "\n") != strings.Join(s.want, "\n") {
			t.Fatalf("%s: PostgreSQL sent %q, the test expects %q", s.sql, fromPG, s.want)
		}
		if strings.Join(got, "\n") != strings.Join(s.want, "\n") {
			t.Errorf("%s: streamdb sent notices %q, PostgreSQL %q", s.sql, got, s.want)
		}
	}

	// Sinks are streamdb's own: they are listed after the views.
	exec(t, sdb,
		"CREATE STREAM s (k int) WITH (subject = 'notices.s')",
		"CREATE MATERIALIZED VIEW sv AS SELECT k, count(*) AS n FROM s GROUP BY k",
		"CREATE SINK sk FROM sv INTO 'notices.out'")
	sdbNotices()
	exec(t, sdb, "DROP STREAM s CASCADE")
	want := "drop cascades to 2 other objects | drop cascades to materialized view sv\ndrop cascades to sink sk"
	if got := strings.Join(sdbNotices(), "\n"); got != want {
		t.Errorf("DROP STREAM s CASCADE: notices %q, want %q", got, want)
	}
}

// TestBackfillFailureNotice checks that CREATE MATERIALIZED VIEW says so
// when rows fail during its backfill, rather than leaving an empty view
// unexplained, and says nothing when none fail.
func TestBackfillFailureNotice(t *testing.T) {
	srv := startServer(t)
	conn, notices := noticeConn(t, srv.DSN())
	exec(t, conn,
		"CREATE STREAM orders (customer_id bigint, qty int) WITH (subject = 'notices.orders')",
		"INSERT INTO orders VALUES (1, 2), (2, 3), (3, 0)")
	exec(t, conn, "CREATE MATERIALIZED VIEW fine AS SELECT customer_id, qty FROM orders")
	if got := notices(); len(got) != 0 {
		t.Fatalf("CREATE of a view without failed rows sent %q", got)
	}
	exec(t, conn, "CREATE MATERIALIZED VIEW bad AS SELECT customer_id, 1/0 AS x FROM orders")
	got := notices()
	want := "3 rows failed during the backfill of materialized view bad and are not in it | " +
		"The latest failed in projection with SQLSTATE 22012: division by zero. SELECT * FROM streamdb_view_errors WHERE view = 'bad' lists them."
	if len(got) != 1 || got[0] != want {
		t.Fatalf("CREATE of a view whose rows all fail: notices %q, want %q", got, want)
	}
	exec(t, conn, "CREATE MATERIALIZED VIEW partly AS SELECT customer_id, 6/qty AS x FROM orders")
	want = "1 row failed during the backfill of materialized view partly and is not in it"
	if got := notices(); len(got) != 1 || !strings.HasPrefix(got[0], want+" | ") {
		t.Fatalf("CREATE of a view with one failed row: notices %q, want %q", got, want)
	}
	wantRows(t, conn, "SELECT view, failed_rows FROM streamdb_view_errors WHERE view = 'bad' LIMIT 1", "bad 3")
}

// TestSharedSubjectNotice checks that a second stream on a subject that a
// stream already reads is created (it may read other columns) with a
// NOTICE naming the first.
func TestSharedSubjectNotice(t *testing.T) {
	srv := startServer(t)
	conn, notices := noticeConn(t, srv.DSN())
	exec(t, conn, "CREATE STREAM first_s (k int) WITH (subject = 'notices.shared')")
	if got := notices(); len(got) != 0 {
		t.Fatalf("CREATE STREAM on a new subject sent %q", got)
	}
	exec(t, conn, "CREATE STREAM second_s (v text) WITH (subject = 'notices.shared')")
	got := notices()
	want := `subject "notices.shared" is also read by stream first_s | Both read every message published to it, and an INSERT into either is read by both. To read other messages, DROP STREAM second_s and create it again WITH (subject = '...').`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("second CREATE STREAM on a subject: notices %q, want %q", got, want)
	}
	exec(t, conn, "CREATE STREAM third_s (w text) WITH (subject = 'notices.shared')")
	got = notices()
	want = `subject "notices.shared" is also read by streams first_s, second_s | All read every message published to it, and an INSERT into any of them is read by all. To read other messages, DROP STREAM third_s and create it again WITH (subject = '...').`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("third CREATE STREAM on a subject: notices %q, want %q", got, want)
	}
}

// TestStreamNoColumnNotice checks the NOTICEs for messages none of whose
// fields names a column of the stream (camelCase fields, snake_case
// columns), which read as rows of NULLs: at an ad-hoc SELECT of the
// stream, and at CREATE of a stream or view over such first messages.
func TestStreamNoColumnNotice(t *testing.T) {
	srv := startServer(t)
	conn, notices := noticeConn(t, srv.DSN())
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM orders (customer_id bigint, amount int) WITH (subject = 'notices.camel')")
	if got := notices(); len(got) != 0 {
		t.Fatalf("CREATE STREAM on an empty subject sent %q", got)
	}
	for i := 1; i <= 3; i++ {
		testutil.Publish(t, js, "notices.camel", fmt.Sprintf(`{"customerId": %d, "amountCents": 5}`, i))
	}
	detail := ` | The first has the fields "amountCents", "customerId"; the columns are customer_id, amount. ` +
		"Fields map to columns by exact name: declare the columns as the producer names the fields (a quoted identifier keeps its case)."

	wantRows(t, conn, "SELECT count(*), count(customer_id) FROM orders", "3 0")
	want := "3 of the 3 messages read from stream orders name none of its columns, so their rows are all NULL" + detail
	if got := notices(); len(got) != 1 || got[0] != want {
		t.Fatalf("SELECT of a stream whose messages name no column: notices %q, want %q", got, want)
	}

	exec(t, conn, "CREATE MATERIALIZED VIEW per_customer AS SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id")
	want = "the first 3 messages of stream orders name none of its columns, so their rows are all NULL" + detail
	if got := notices(); len(got) != 1 || got[0] != want {
		t.Fatalf("CREATE MATERIALIZED VIEW over such a stream: notices %q, want %q", got, want)
	}

	// The view's reader counts them too, for monitoring.
	if got := metricValue(t, scrape(t, srv), "streamdb_source_no_column_messages_total", "stream", "orders"); got != 3 {
		t.Errorf("streamdb_source_no_column_messages_total{stream=orders} = %v after the view read 3 such messages, want 3", got)
	}

	exec(t, conn, `CREATE STREAM camel ("customerId" bigint, "amountCents" int) WITH (subject = 'notices.camel')`)
	got := notices()
	if len(got) != 1 || !strings.HasPrefix(got[0], `subject "notices.camel" is also read by stream orders`) {
		t.Fatalf("CREATE STREAM with the producer's field names: notices %q, want only the shared subject's", got)
	}
	wantRows(t, conn, `SELECT count("customerId") FROM camel`, "3")
	if got := notices(); len(got) != 0 {
		t.Fatalf("SELECT of a stream whose columns the messages name: notices %q", got)
	}

	testutil.Publish(t, js, "notices.camel", `{"customer_id": 4, "amount": 1}`)
	wantRows(t, conn, "SELECT count(*), count(customer_id) FROM orders", "4 1")
	want = "3 of the 4 messages read from stream orders name none of its columns, so their rows are all NULL" + detail
	if got := notices(); len(got) != 1 || got[0] != want {
		t.Fatalf("SELECT of a stream some of whose messages name no column: notices %q, want %q", got, want)
	}
	flush(t, conn)
	if got := metricValue(t, scrape(t, srv), "streamdb_source_no_column_messages_total", "stream", "orders"); got != 3 {
		t.Errorf("streamdb_source_no_column_messages_total{stream=orders} = %v after a message naming its columns, want still 3", got)
	}
}
