package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

const eventsDDL = `CREATE STREAM ev (
  id BIGINT, name VARCHAR, qty INT, price NUMERIC, ok BOOLEAN, ts TIMESTAMP, tz TIMESTAMPTZ, score DOUBLE PRECISION
) WITH (subject = 'e2e.ev', format = 'json')`

// goodEvents are valid JSON objects: fields by name in any order, missing
// fields and JSON null as NULL, unknown fields ignored, and the three
// timestamp spellings (RFC 3339, 'YYYY-MM-DD HH:MM:SS[.ffffff]', epoch ms).
var goodEvents = []string{
	`{"id": 1, "name": "a", "qty": 2, "price": 1.25, "ok": true, "ts": "2026-11-29T10:00:00Z", "tz": "2026-11-29T10:00:00+02:00", "score": 0.5}`,
	`{"score": -1.5, "tz": "2026-11-29 10:00:01", "ts": "2026-11-29 10:00:01", "ok": false, "price": 10, "qty": 3, "name": "b", "id": 2}`,
	`{"id": 3, "name": "c", "qty": 4, "ts": 1795946402000, "tz": 1795946402123}`,
	`{"id": 4, "name": null, "qty": null, "price": null, "ok": null, "ts": null, "tz": null, "score": null}`,
	`{"id": 5, "extra": "ignored", "nested": {"x": [1, 2]}, "qty": 5, "ts": "2026-11-29 10:00:03.250000"}`,
	`{"id": 6, "name": "ünïcødé \"quoted\"", "qty": -7, "price": 12345678901234567890.5, "score": 1e300}`,
}

// badEvents are not JSON objects, or do not fit the stream's columns.
var badEvents = []string{
	`not json at all`,
	`{"id": 100, "qty": `,
	``,
	`[1, 2, 3]`,
	`42`,
	`{"id": 101, "qty": "five"}`,
	`{"id": 102, "ts": "not a time"}`,
	`{"id": {"nested": 1}}`,
	`{"id": 103, "ok": "perhaps"}`,
	`{"id": 104, "qty": 3000000000}`,
}

// TestExternalProducer publishes JSON to the stream's subject with nats.go,
// good and malformed messages interleaved, and checks that after FLUSH the
// views hold exactly the good ones, that SHOW STREAMS counts the bad ones,
// and that the server goes on serving.
func TestExternalProducer(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, eventsDDL,
		"CREATE STREAM idle (x INT) WITH (subject = 'e2e.idle')",
		"CREATE MATERIALIZED VIEW ev_all AS SELECT * FROM ev",
		"CREATE MATERIALIZED VIEW ev_totals AS SELECT count(*) AS n, sum(qty) AS qty, count(ts) AS with_ts, count(name) AS named FROM ev")

	_, js := testutil.JetStream(t, srv.NATSURL())
	// Interleave: good, bad, good, bad, ...
	for i := 0; i < len(goodEvents) || i < len(badEvents); i++ {
		if i < len(goodEvents) {
			testutil.Publish(t, js, "e2e.ev", goodEvents[i])
		}
		if i < len(badEvents) {
			testutil.Publish(t, js, "e2e.ev", badEvents[i])
		}
	}
	// Good rows inserted with SQL mix with the published ones.
	exec(t, conn, "INSERT INTO ev (id, name, qty) VALUES (7, 'sql', 1)")
	flush(t, conn)

	wantRows(t, conn, "SELECT * FROM ev_all ORDER BY id",
		"1 a 2 1.25 t 2026-11-29 10:00:00 2026-11-29 08:00:00+00 0.5",
		"2 b 3 10 f 2026-11-29 10:00:01 2026-11-29 10:00:01+00 -1.5",
		"3 c 4 NULL NULL 2026-11-29 10:00:02 2026-11-29 10:00:02.123+00 NULL",
		"4 NULL NULL NULL NULL NULL NULL NULL",
		"5 NULL 5 NULL NULL 2026-11-29 10:00:03.25 NULL NULL",
		`6 ünïcødé "quoted" -7 12345678901234567890.5 NULL NULL NULL 1e+300`,
		"7 sql 1 NULL NULL NULL NULL NULL",
	)
	wantRows(t, conn, "SELECT * FROM ev_totals", "7 8 4 5")

	st := showStream(t, conn, "ev")
	if got := mustInt(t, st["skipped_messages"]); got != int64(len(badEvents)) {
		t.Errorf("SHOW STREAMS skipped_messages = %d, want %d", got, len(badEvents))
	}
	if st["subject"] != "e2e.ev" || st["format"] != "json" {
		t.Errorf("SHOW STREAMS row %v", st)
	}
	if got := showStream(t, conn, "idle")["skipped_messages"]; got != "0" {
		t.Errorf("stream without bad input: skipped_messages = %s, want 0", got)
	}

	// A view created now backfills over the same input and skips the same
	// messages; the count does not double.
	exec(t, conn, "CREATE MATERIALIZED VIEW ev_ids AS SELECT count(DISTINCT id) AS ids, max(id) AS top FROM ev")
	wantRows(t, conn, "SELECT * FROM ev_ids", "7 7")
	if got := mustInt(t, showStream(t, conn, "ev")["skipped_messages"]); got != int64(len(badEvents)) {
		t.Errorf("after a second view: skipped_messages = %d, want %d", got, len(badEvents))
	}

	// More traffic: the views keep up and the counter only grows with bad input.
	var more []string
	for i := 10; i < 60; i++ {
		more = append(more, fmt.Sprintf(`{"id": %d, "qty": 1}`, i))
	}
	testutil.Publish(t, js, "e2e.ev", more...)
	testutil.Publish(t, js, "e2e.ev", `{"id": "eleven"}`)
	flush(t, conn)
	wantRows(t, conn, "SELECT n, qty FROM ev_totals", "57 58")
	wantRows(t, conn, "SELECT * FROM ev_ids", "57 59")
	if got := mustInt(t, showStream(t, conn, "ev")["skipped_messages"]); got != int64(len(badEvents)+1) {
		t.Errorf("skipped_messages = %d, want %d", got, len(badEvents)+1)
	}
	// Skipped messages are counted by the views' readers: a stream without
	// a view shows 0 whatever arrives, and its first view counts them.
	testutil.Publish(t, js, "e2e.idle", `{"x": 1}`, `{"x": "one"}`, `garbage`, `{"x": 2}`)
	flush(t, conn)
	if got := showStream(t, conn, "idle")["skipped_messages"]; got != "0" {
		t.Errorf("stream without a view: skipped_messages = %s, want 0", got)
	}
	exec(t, conn, "CREATE MATERIALIZED VIEW idle_sum AS SELECT count(*) AS n, sum(x) AS s FROM idle")
	wantRows(t, conn, "SELECT * FROM idle_sum", "2 3")
	if got := showStream(t, conn, "idle")["skipped_messages"]; got != "2" {
		t.Errorf("stream with a view: skipped_messages = %s, want 2", got)
	}
	exec(t, conn, "INSERT INTO idle VALUES (10)")
	flush(t, conn)
	wantRows(t, conn, "SELECT * FROM idle_sum", "3 13")
	wantRows(t, conn, "SELECT 1 + 1", "2")
}

// TestPublishedBeforeView publishes to the subject of a stream before any
// view exists; a view created afterwards is backfilled with everything,
// without FLUSH.
func TestPublishedBeforeView(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE STREAM pre (k VARCHAR, v BIGINT) WITH (subject = 'e2e.pre')")
	_, js := testutil.JetStream(t, srv.NATSURL())
	var msgs []string
	var total int64
	for i := range 500 {
		msgs = append(msgs, fmt.Sprintf(`{"k": "k%d", "v": %d}`, i%7, i))
		total += int64(i)
	}
	testutil.Publish(t, js, "e2e.pre", msgs...)
	exec(t, conn, "CREATE MATERIALIZED VIEW pre_sum AS SELECT count(*) AS n, sum(v) AS total, count(DISTINCT k) AS keys FROM pre")
	wantRows(t, conn, "SELECT * FROM pre_sum", fmt.Sprintf("500 %d 7", total))
}

// TestExternalNATS runs streamdb with --nats-url against a standalone NATS
// server: the JetStream stream is created there, SQL inserts and outside
// producers both reach the views, and a restart keeps the views.
func TestExternalNATS(t *testing.T) {
	url := testutil.StartNATS(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{NATSURL: url})
	if srv.NATSURL() != url {
		t.Fatalf("server NATS URL %s, want %s", srv.NATSURL(), url)
	}
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE STREAM orders (id BIGINT, customer VARCHAR, cents INT) WITH (subject = 'ext.orders', format = 'json')",
		"CREATE MATERIALIZED VIEW per_customer AS SELECT customer, count(*) AS n, sum(cents) AS cents FROM orders GROUP BY customer",
		"INSERT INTO orders VALUES (1, 'ann', 100), (2, 'bob', 250)")

	_, js := testutil.JetStream(t, url)
	ctx := testutil.Context(t, 30*time.Second)
	st, err := js.Stream(ctx, "streamdb_orders")
	if err != nil {
		t.Fatalf("the JetStream stream streamdb_orders is not on the external NATS server: %v", err)
	}
	if subs := st.CachedInfo().Config.Subjects; len(subs) != 1 || subs[0] != "ext.orders" {
		t.Errorf("JetStream stream subjects %v, want [ext.orders]", subs)
	}
	testutil.Publish(t, js, "ext.orders", `{"id": 3, "customer": "ann", "cents": 5}`, `{"id": 4, "customer": "cid", "cents": 7}`, `oops`)
	flush(t, conn)
	wantRows(t, conn, "SELECT * FROM per_customer ORDER BY customer", "ann 2 105", "bob 1 250", "cid 1 7")
	if got := showStream(t, conn, "orders")["skipped_messages"]; got != "1" {
		t.Errorf("skipped_messages = %s, want 1", got)
	}

	// A stream bound to a JetStream stream that already exists on the server.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "preexisting", Subjects: []string{"ext.pre"}}); err != nil {
		t.Fatal(err)
	}
	testutil.Publish(t, js, "ext.pre", `{"x": 1}`, `{"x": 2}`)
	exec(t, conn,
		"CREATE STREAM pre (x INT) WITH (subject = 'ext.pre')",
		"CREATE MATERIALIZED VIEW pre_sum AS SELECT sum(x) AS s FROM pre")
	wantRows(t, conn, "SELECT * FROM pre_sum", "3")
	if got := showStream(t, conn, "pre")["jetstream_stream"]; got != "preexisting" {
		t.Errorf("jetstream_stream = %q, want the existing stream preexisting", got)
	}

	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.Publish(t, js, "ext.orders", `{"id": 5, "customer": "bob", "cents": 1}`)
	flush(t, conn)
	wantRows(t, conn, "SELECT * FROM per_customer ORDER BY customer", "ann 2 105", "bob 2 251", "cid 1 7")
	wantRows(t, conn, "SELECT * FROM pre_sum", "3")
	if !strings.Contains(srv.Logs(), "--nats-url") {
		t.Errorf("server was not started with --nats-url")
	}
}
