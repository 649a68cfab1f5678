package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// alterPair is a streamdb server and a PostgreSQL fed the same events of
// a stream ev (k text, n bigint): streamdb through JetStream, PostgreSQL
// as rows of a table ev. A materialized view and a PostgreSQL view of the
// same name and query then answer alike, before and after an ALTER, over
// every event sent, also those JetStream no longer holds.
type alterPair struct {
	srv      *testutil.Server
	sdb, ref *pgx.Conn
	js       jetstream.JetStream
	subject  string
	sent     int
	notices  chan string // NOTICE messages sdb received
	// event is event i's key and value; by default k<i%5> and i.
	event func(i int) (string, int64)
}

func startAlterPair(t *testing.T, subject string) *alterPair {
	t.Helper()
	p := &alterPair{srv: startServer(t), subject: subject, notices: make(chan string, 100)}
	cfg, err := pgx.ParseConfig(p.srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		select {
		case p.notices <- n.Message:
		default:
		}
	}
	if p.sdb, err = pgx.ConnectConfig(testutil.Context(t, time.Minute), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.sdb.Close(context.Background()) })
	p.ref = testutil.StartPostgres(t).Conn(t)
	_, p.js = testutil.JetStream(t, p.srv.NATSURL())
	p.event = func(i int) (string, int64) { return fmt.Sprintf("k%d", i%5), int64(i) }
	exec(t, p.sdb, fmt.Sprintf(`CREATE STREAM ev (k text, n bigint) WITH (subject = '%s')`, subject))
	exec(t, p.ref, `CREATE TABLE ev (k text, n bigint)`)
	return p
}

// send publishes the next n events and stores them in PostgreSQL.
func (p *alterPair) send(t *testing.T, n int) {
	t.Helper()
	from := p.sent
	publishMany(t, p.js, p.subject, n, func(i int) string {
		k, v := p.event(from + i)
		return fmt.Sprintf(`{"k": %q, "n": %d}`, k, v)
	})
	p.store(t, from, n)
	p.sent += n
}

// store inserts events from..from+n-1 into PostgreSQL's ev.
func (p *alterPair) store(t *testing.T, from, n int) {
	t.Helper()
	rows := make([][]any, n)
	for i := range rows {
		k, v := p.event(from + i)
		rows[i] = []any{k, v}
	}
	if _, err := p.ref.CopyFrom(testutil.Context(t, time.Minute), pgx.Identifier{"ev"}, []string{"k", "n"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
}

// view creates a materialized view in streamdb and a view in PostgreSQL.
func (p *alterPair) view(t *testing.T, name, query string) {
	t.Helper()
	exec(t, p.sdb, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", name, query))
	exec(t, p.ref, fmt.Sprintf("CREATE VIEW %s AS %s", name, query))
}

// alter runs ALTER MATERIALIZED VIEW name [with] AS query in streamdb and
// replaces PostgreSQL's view of that name with the query.
func (p *alterPair) alter(t *testing.T, name, with, query string) {
	t.Helper()
	exec(t, p.sdb, fmt.Sprintf("ALTER MATERIALIZED VIEW %s %s AS %s", name, with, query))
	exec(t, p.ref, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS %s", name, query))
}

// same flushes streamdb and compares each query's rows with PostgreSQL's.
func (p *alterPair) same(t *testing.T, queries ...string) {
	t.Helper()
	flush(t, p.sdb)
	sameRowsAsPostgres(t, p.sdb, p.ref, queries...)
}

// purge has JetStream discard every message of the pair's stream.
func (p *alterPair) purge(t *testing.T) {
	t.Helper()
	ctx := testutil.Context(t, time.Minute)
	name, err := p.js.StreamNameBySubject(ctx, p.subject)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
}
