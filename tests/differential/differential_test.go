package differential

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

const (
	subject       = "diff.events"
	defaultEvents = 30000
	shortEvents   = 6000
	rounds        = 4
	// tableChanges is the number of table statements per round.
	tableChanges = 60
)

// TestDifferential feeds the same generated events to streamdb (JSON on
// NATS) and to PostgreSQL (COPY), and checks that every materialized view
// equals its defining query run as a batch in PostgreSQL, at an
// intermediate point and at the end, plus some ad-hoc queries over views.
func TestDifferential(t *testing.T) {
	seed := testutil.Seed(t, "DIFF_SEED")
	n := defaultEvents
	if testing.Short() {
		n = shortEvents
	}
	if s := os.Getenv("DIFF_EVENTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < rounds {
			t.Fatalf("DIFF_EVENTS=%q: want an integer >= %d", s, rounds)
		}
		n = v
	}
	d := &diffTest{t: t, seed: seed, replay: fmt.Sprintf("replay with DIFF_SEED=%d DIFF_EVENTS=%d", seed, n)}
	t.Logf("DIFF_SEED=%d DIFF_EVENTS=%d", seed, n)
	start := time.Now()

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	d.ctx = ctx

	srv := testutil.StartServer(t, testutil.ServerOptions{})
	pg := testutil.StartPostgres(t)
	d.sdb = srv.Conn(t)
	d.setupPostgres(pg)
	d.exec(d.sdb, "streamdb", fmt.Sprintf(
		"CREATE STREAM events (%s) WITH (subject = '%s', format = 'json')", columnDefs(), subject))

	nc, err := nats.Connect(srv.NATSURL())
	if err != nil {
		d.fatalf("connecting to NATS %s: %v", srv.NATSURL(), err)
	}
	defer nc.Close()
	d.js, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(2048))
	if err != nil {
		d.fatalf("jetstream: %v", err)
	}

	gen := newGenerator(seed)
	batches := make([][]event, rounds)
	for i := 0; i < n; i++ {
		r := i * rounds / n
		batches[r] = append(batches[r], gen.event())
	}

	d.lap = time.Now()
	d.setupTables()
	tables := newTableGen(seed)
	changes := tableChanges
	if testing.Short() {
		changes /= 3
	}
	d.changeTables(tables, changes/2) // before any view exists
	d.createViews(0)
	d.step("created views of phase 0")
	d.load(batches[0])
	d.changeTables(tables, changes)
	d.load(batches[1])
	d.step("rounds 1-2 and table changes")
	d.flush()
	d.step("flushed")
	d.checkViews("after 2 of 4 rounds")
	d.step("compared")

	d.createViews(1)
	d.step("created views of phase 1")
	d.load(batches[2])
	d.changeTables(tables, changes)
	d.step("round 3 and table changes")

	// Create the last views while the final round is being published and
	// processed.
	done := make(chan struct{})
	var pubErr error
	go func() {
		defer close(done)
		pubErr = d.publish(batches[3])
	}()
	d.createViews(2)
	d.step("created views of phase 2")
	d.changeTables(tables, changes)
	<-done
	d.step("round 4 published")
	if pubErr != nil {
		d.fatalf("publishing: %v", pubErr)
	}
	d.copyToPostgres(batches[3])
	d.flush()
	d.step("flushed")

	d.checkViews("at the end")
	d.checkAdhoc()
	d.checkSkipped()
	d.step("compared")
	t.Logf("%d events, %d table statements, %d views, %v (DIFF_SEED=%d)", n, d.tableStatements, len(d.created), time.Since(start).Round(time.Millisecond), seed)
	if len(d.created) < 30 {
		t.Errorf("only %d views were created; the differential test must cover at least 30", len(d.created))
	}
}

type diffTest struct {
	t      *testing.T
	ctx    context.Context
	seed   uint64
	replay string
	sdb    *pgx.Conn
	pg     *pgx.Conn
	js     jetstream.JetStream
	// created holds the views that exist in streamdb.
	created map[string]bool
	lap     time.Time
	// tableStatements counts the table changes run on both sides.
	tableStatements int
}

// step logs the time since the previous step.
func (d *diffTest) step(what string) {
	d.t.Logf("%-32s %v", what, time.Since(d.lap).Round(time.Millisecond))
	d.lap = time.Now()
}

func (d *diffTest) fatalf(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf(format+"\n"+d.replay, args...)
}

func (d *diffTest) errorf(format string, args ...any) {
	d.t.Helper()
	d.t.Errorf(format+"\n"+d.replay, args...)
}

func (d *diffTest) exec(conn *pgx.Conn, side, sql string) {
	d.t.Helper()
	if _, err := conn.Exec(d.ctx, sql); err != nil {
		d.fatalf("%s: %s: %v", side, sql, err)
	}
}

// setupPostgres creates a database whose character classification is
// Unicode-aware (lower/upper of non-ASCII letters, as streamdb does) while
// text still sorts by code point, and the events table in it.
func (d *diffTest) setupPostgres(pg *testutil.Postgres) {
	admin := pg.Conn(d.t)
	d.exec(admin, "postgres", `CREATE DATABASE diff TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C.utf8'`)
	dsn := strings.Replace(pg.DSN(), "/postgres?", "/diff?", 1)
	conn, err := pgx.Connect(d.ctx, dsn)
	if err != nil {
		d.fatalf("connecting to %s: %v", dsn, err)
	}
	d.t.Cleanup(func() { conn.Close(context.Background()) })
	d.pg = conn
	d.exec(d.pg, "postgres", fmt.Sprintf("CREATE TABLE events (%s)", columnDefs()))
}

func (d *diffTest) createViews(phase int) {
	d.t.Helper()
	if d.created == nil {
		d.created = map[string]bool{}
	}
	for _, v := range views {
		if v.phase != phase {
			continue
		}
		sql := fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", v.name, v.query)
		if _, err := d.sdb.Exec(d.ctx, sql); err != nil {
			d.errorf("view %s: streamdb rejected the view: %v\n  %s", v.name, err, testutil.OneLine(sql))
			continue
		}
		d.created[v.name] = true
	}
}

// load publishes a batch to streamdb and copies it into PostgreSQL.
func (d *diffTest) load(batch []event) {
	d.t.Helper()
	if err := d.publish(batch); err != nil {
		d.fatalf("publishing: %v", err)
	}
	d.copyToPostgres(batch)
}

// publishWindow bounds the asynchronous publishes in flight.
const publishWindow = 1000

// publish sends the events with asynchronous JetStream publishes, a window
// at a time, and waits for every acknowledgement.
func (d *diffTest) publish(batch []event) error {
	for start := 0; start < len(batch); start += publishWindow {
		end := min(start+publishWindow, len(batch))
		futures := make([]jetstream.PubAckFuture, 0, end-start)
		for i := start; i < end; i++ {
			f, err := d.js.PublishAsync(subject, batch[i].json(), jetstream.WithStallWait(30*time.Second))
			if err != nil {
				return fmt.Errorf("event %d: %w", i, err)
			}
			futures = append(futures, f)
		}
		select {
		case <-d.js.PublishAsyncComplete():
		case <-time.After(60 * time.Second):
			return fmt.Errorf("%d publishes not acknowledged within 60s", d.js.PublishAsyncPending())
		}
		for i, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return fmt.Errorf("event %d: %w", start+i, err)
			}
		}
	}
	return nil
}

func (d *diffTest) copyToPostgres(batch []event) {
	d.t.Helper()
	rows := make([][]any, len(batch))
	for i := range batch {
		rows[i] = batch[i].values()
	}
	n, err := d.pg.CopyFrom(d.ctx, pgx.Identifier{"events"}, columnNames(), pgx.CopyFromRows(rows))
	if err != nil || n != int64(len(rows)) {
		d.fatalf("postgres COPY: %d of %d rows: %v", n, len(rows), err)
	}
}

func (d *diffTest) flush() {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.ctx, 3*time.Minute)
	defer cancel()
	if _, err := d.sdb.Exec(ctx, "FLUSH"); err != nil {
		d.fatalf("streamdb FLUSH: %v", err)
	}
}

// checkViews compares every created view with its query in PostgreSQL.
func (d *diffTest) checkViews(when string) {
	d.t.Helper()
	for _, v := range views {
		if !d.created[v.name] {
			continue
		}
		sdbSQL := "SELECT * FROM " + v.name
		pgSQL := v.query
		if v.pg != "" {
			pgSQL = v.pg
		}
		d.compare(fmt.Sprintf("view %s (%s)", v.name, when), sdbSQL, pgSQL, false, v.floatAggs)
	}
}

func (d *diffTest) checkAdhoc() {
	d.t.Helper()
	for _, q := range adhoc {
		ok := true
		for _, v := range q.views {
			ok = ok && d.created[v]
		}
		if !ok {
			d.t.Logf("ad-hoc %s skipped: view missing", q.name)
			continue
		}
		d.compare("ad-hoc "+q.name, q.streamdb, q.postgres, q.ordered, q.floatCols)
	}
}

// compare runs sdbSQL in streamdb and pgSQL in PostgreSQL and reports any
// difference in columns, types or rows.
func (d *diffTest) compare(what, sdbSQL, pgSQL string, ordered bool, floatCols []string) {
	d.t.Helper()
	want, err := query(d.ctx, d.pg, pgSQL)
	if err != nil {
		d.fatalf("%s: postgres: %v\n  %s", what, err, testutil.OneLine(pgSQL))
	}
	got, err := query(d.ctx, d.sdb, sdbSQL)
	if err != nil {
		d.errorf("%s: streamdb: %v\n  %s", what, err, sdbSQL)
		return
	}
	issues := compareSchema(want, got)
	if len(want.cols) == len(got.cols) {
		c := newComparer(want.cols, floatCols)
		if ordered {
			issues = append(issues, c.compareOrdered(want, got)...)
		} else {
			issues = append(issues, c.compareMultiset(want, got)...)
		}
	}
	if len(issues) > 0 {
		d.errorf("%s differs from PostgreSQL\n  streamdb: %s\n  postgres: %s\n  %s",
			what, testutil.OneLine(sdbSQL), testutil.OneLine(pgSQL), strings.Join(issues, "\n  "))
	}
}

// checkSkipped requires that streamdb decoded every published message.
func (d *diffTest) checkSkipped() {
	d.t.Helper()
	res, err := query(d.ctx, d.sdb, "SHOW STREAMS")
	if err != nil {
		d.errorf("SHOW STREAMS: %v", err)
		return
	}
	idx := -1
	for i, c := range res.cols {
		if c == "skipped_messages" {
			idx = i
		}
	}
	for _, r := range res.rows {
		if idx >= 0 && r[idx].s != "0" {
			d.errorf("SHOW STREAMS: stream %s skipped %s messages (see the server log)", r[0].s, r[idx].s)
		}
	}
}
