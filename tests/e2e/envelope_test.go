package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// envelopeViews are views over the upsert stream acct (keyed by a subject
// token) and the event stream pay, each with the same query over
// PostgreSQL tables changed the same way.
var envelopeViews = []struct{ name, query string }{
	{"acct_tiers", "SELECT tier, count(*) AS n, sum(balance) AS total FROM acct GROUP BY tier"},
	{"acct_paid", "SELECT a.tier, count(*) AS n, sum(p.amount) AS paid, max(a.balance) AS top FROM acct a JOIN pay p ON a.id = p.id GROUP BY a.tier"},
	{"acct_rich", "SELECT id, owner FROM acct WHERE balance > 50"},
}

// TestUpsertEnvelopeMatchesPostgres: upserts and tombstones (empty and
// JSON null messages) on acct.<id> change a stream with envelope =
// 'upsert' keyed by the subject's second token; payments arrive on a
// plain stream. The stream read ad hoc (its current rows) and views over
// it, one joining it with the payments, equal PostgreSQL 15 given the
// same changes as INSERT ... ON CONFLICT and DELETE, before and after a
// kill -9 that lands while the views are taking a round in.
func TestUpsertEnvelopeMatchesPostgres(t *testing.T) {
	const seed = 4102
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t).Conn(t)
	exec(t, conn, `CREATE STREAM acct (owner text, balance numeric, tier text) INCLUDE subject_token 2 AS id
		WITH (subject = 'acct.*', envelope = 'upsert', key = 'id')`,
		`CREATE STREAM pay (id text, amount int) WITH (subject = 'pay')`)
	exec(t, pg, `CREATE TABLE acct (owner text, balance numeric, tier text, id text PRIMARY KEY)`,
		`CREATE TABLE pay (id text, amount int)`)
	for _, v := range envelopeViews {
		exec(t, conn, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query)
	}
	wantExecCode(t, conn, "INSERT INTO acct VALUES ('x', 1, 'gold', 'k1')", "42809")
	wantExecCode(t, conn, "DELETE FROM acct", "42809")
	wantExecCode(t, conn, "ALTER STREAM acct ADD COLUMN note text", "42809")
	exec(t, conn, "COMMENT ON STREAM acct IS 'accounts by subject'")
	tiers := []string{"gold", "silver", "bronze"}
	round := func(n int) {
		t.Helper()
		_, js := testutil.JetStream(t, srv.NATSURL())
		ctx := testutil.Context(t, time.Minute)
		batch := &pgx.Batch{}
		for range n {
			id := fmt.Sprintf("k%d", rng.Intn(40))
			var subject, msg string
			switch r := rng.Intn(20); {
			case r < 12:
				owner, balance, tier := fmt.Sprintf("o%d", rng.Intn(9)), fmt.Sprintf("%d.%02d", rng.Intn(100), rng.Intn(100)), tiers[rng.Intn(3)]
				subject, msg = "acct."+id, fmt.Sprintf(`{"owner": %q, "balance": %q, "tier": %q, "id": "not the key"}`, owner, balance, tier)
				batch.Queue(`INSERT INTO acct VALUES ($1, $2::numeric, $3, $4)
					ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, balance = excluded.balance, tier = excluded.tier`, owner, balance, tier, id)
			case r < 14:
				subject = "acct." + id // an empty message: a tombstone
				batch.Queue("DELETE FROM acct WHERE id = $1", id)
			case r < 15:
				subject, msg = "acct."+id, "null"
				batch.Queue("DELETE FROM acct WHERE id = $1", id)
			case r < 19:
				amount := rng.Intn(50)
				subject, msg = "pay", fmt.Sprintf(`{"id": %q, "amount": %d}`, id, amount)
				batch.Queue("INSERT INTO pay VALUES ($1, $2)", id, amount)
			default:
				subject, msg = "acct."+id, `{"owner": "bad", "balance": "not a number"}` // skipped
			}
			if _, err := js.Publish(ctx, subject, []byte(msg)); err != nil {
				t.Fatalf("publish: %v", err)
			}
		}
		if err := pg.SendBatch(testutil.Context(t, time.Minute), batch).Close(); err != nil {
			t.Fatal(err)
		}
	}
	compare := func(when string) {
		t.Helper()
		flush(t, conn)
		const adhoc = "SELECT id, owner, balance, tier FROM acct"
		if diff := testutil.RowsDiff(t, conn, adhoc, pg, adhoc); diff != "" {
			t.Fatalf("seed %d, %s: the upsert stream read ad hoc has %s", seed, when, diff)
		}
		for _, v := range envelopeViews {
			if diff := testutil.RowsDiff(t, conn, "SELECT * FROM "+v.name, pg, v.query); diff != "" {
				t.Fatalf("seed %d, %s: view %s has %s", seed, when, v.name, diff)
			}
		}
	}
	round(300)
	compare("first round")
	round(300)
	srv.Kill(t) // before any FLUSH: the views are taking the round in
	srv.Restart(t)
	conn = srv.Conn(t)
	compare("after kill -9")
	round(200)
	compare("after kill -9 and a round")
	// ROLLBACK TO SAVEPOINT restores the keyed state with the views; the
	// messages published since are read again from there.
	exec(t, conn, "SAVEPOINT before_last_round")
	round(200)
	compare("before ROLLBACK TO SAVEPOINT")
	exec(t, conn, "ROLLBACK TO SAVEPOINT before_last_round")
	compare("after ROLLBACK TO SAVEPOINT")
	exec(t, conn, "DROP STREAM acct CASCADE")
	_, js := testutil.JetStream(t, srv.NATSURL())
	if _, err := js.Stream(testutil.Context(t, time.Minute), "streamdb_acct"); err != nil {
		t.Errorf("DROP STREAM of a stream with an envelope took its JetStream stream: %v", err)
	}
}

// debeziumSource is the source block of the events a Debezium PostgreSQL
// connector publishes (the test's values).
func debeziumSource(lsn int, snapshot string) map[string]any {
	return map[string]any{"version": "2.7.3.Final", "connector": "postgresql", "name": "dbz", "ts_ms": 1733400000000 + lsn,
		"snapshot": snapshot, "db": "postgres", "sequence": fmt.Sprintf(`["%d","%d"]`, lsn-1, lsn), "schema": "public",
		"table": "orders", "txId": 700 + lsn, "lsn": lsn, "xmin": nil}
}

// debeziumSchema is the schema part of an event published with
// schemas enabled (abridged: the decoder does not read it).
var debeziumSchema = map[string]any{"type": "struct", "optional": false, "name": "dbz.public.orders.Envelope", "version": 1,
	"fields": []any{
		map[string]any{"type": "struct", "optional": true, "name": "dbz.public.orders.Value", "field": "before", "fields": []any{
			map[string]any{"type": "int32", "optional": false, "field": "id"},
			map[string]any{"type": "string", "optional": true, "field": "customer"},
			map[string]any{"type": "int32", "optional": true, "field": "qty"},
			map[string]any{"type": "string", "optional": true, "field": "note"}}},
		map[string]any{"type": "struct", "optional": true, "name": "dbz.public.orders.Value", "field": "after"},
		map[string]any{"type": "string", "optional": false, "field": "op"},
		map[string]any{"type": "int64", "optional": true, "field": "ts_ms"}}}

// TestDebeziumEnvelopeMatchesPostgres: the changes of a PostgreSQL
// table, published as Debezium Server publishes them to JetStream
// (snapshot reads, creates, updates with and without before, a key
// change as delete, tombstone and create, deletes with the key only in
// before followed by a tombstone, a truncate, a schema change event, some
// with the schema/payload wrapper), make a stream with envelope =
// 'debezium' equal to the table, and views over it equal the same
// queries over the table, before and after a kill -9.
func TestDebeziumEnvelopeMatchesPostgres(t *testing.T) {
	const seed = 4103
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t).Conn(t)
	exec(t, conn, `CREATE STREAM orders (id int PRIMARY KEY, customer text, qty int, note text)
		WITH (subject = 'dbz.public.orders', envelope = 'debezium')`)
	exec(t, pg, `CREATE TABLE orders (id int PRIMARY KEY, customer text, qty int, note text)`)
	views := []struct{ name, query string }{
		{"orders_by_customer", "SELECT customer, count(*) AS n, sum(qty) AS qty, max(note) AS note FROM orders GROUP BY customer"},
		{"orders_total", "SELECT count(*) AS n, sum(qty) AS qty FROM orders"},
	}
	for _, v := range views {
		exec(t, conn, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query)
	}
	type row struct {
		ID       int     `json:"id"`
		Customer *string `json:"customer"`
		Qty      *int    `json:"qty"`
		Note     *string `json:"note"`
	}
	rows := map[int]row{} // the table as the events say
	nextID, lsn := 1, 1000
	var js jetstream.JetStream
	publish := func(payload []byte) {
		t.Helper()
		if _, err := js.Publish(testutil.Context(t, time.Minute), "dbz.public.orders", payload); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	event := func(op string, before, after any, snapshot string) {
		t.Helper()
		lsn += 8
		ev := map[string]any{"before": before, "after": after, "source": debeziumSource(lsn, snapshot), "op": op,
			"ts_ms": 1733400000000 + lsn, "transaction": nil}
		var v any = ev
		if rng.Intn(2) == 0 {
			v = map[string]any{"schema": debeziumSchema, "payload": ev}
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		publish(b)
	}
	randomRow := func(id int) row {
		r := row{ID: id}
		c, q := fmt.Sprintf("c%d", rng.Intn(6)), rng.Intn(100)
		r.Customer, r.Qty = &c, &q
		if rng.Intn(3) > 0 {
			n := fmt.Sprintf("note %d", rng.Intn(1000))
			r.Note = &n
		}
		return r
	}
	keyOnly := func(id int) map[string]any { // before of a delete under REPLICA IDENTITY DEFAULT
		return map[string]any{"id": id, "customer": nil, "qty": nil, "note": nil}
	}
	ids := func() []int {
		var out []int
		for id := range rows {
			out = append(out, id)
		}
		slices.Sort(out)
		return out
	}
	apply := func(sql string, args ...any) {
		t.Helper()
		if _, err := pg.Exec(testutil.Context(t, time.Minute), sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	insert := func(op, snapshot string) {
		r := randomRow(nextID)
		nextID++
		rows[r.ID] = r
		apply("INSERT INTO orders VALUES ($1, $2, $3, $4)", r.ID, r.Customer, r.Qty, r.Note)
		event(op, nil, r, snapshot)
	}
	round := func(n int) {
		t.Helper()
		_, js = testutil.JetStream(t, srv.NATSURL())
		for range n {
			all := ids()
			switch r := rng.Intn(20); {
			case r < 6 || len(all) == 0:
				insert("c", "false")
			case r < 12: // update; before only under REPLICA IDENTITY FULL
				id := all[rng.Intn(len(all))]
				old, nr := rows[id], randomRow(id)
				rows[id] = nr
				apply("UPDATE orders SET customer = $2, qty = $3, note = $4 WHERE id = $1", id, nr.Customer, nr.Qty, nr.Note)
				if rng.Intn(2) == 0 {
					event("u", old, nr, "false")
				} else {
					event("u", nil, nr, "false")
				}
			case r < 14: // a key change: delete, tombstone, create
				id := all[rng.Intn(len(all))]
				nr := rows[id]
				delete(rows, id)
				nr.ID = nextID
				nextID++
				rows[nr.ID] = nr
				apply("UPDATE orders SET id = $2 WHERE id = $1", id, nr.ID)
				event("d", keyOnly(id), nil, "false")
				publish(nil)
				event("c", nil, nr, "false")
			case r < 18:
				id := all[rng.Intn(len(all))]
				delete(rows, id)
				apply("DELETE FROM orders WHERE id = $1", id)
				event("d", keyOnly(id), nil, "false")
				publish(nil) // Debezium's tombstone after a delete
			default: // no change: a heartbeat event, skipped and counted
				publish([]byte(fmt.Sprintf(`{"ts_ms": %d}`, 1733400000000+lsn)))
			}
		}
	}
	compare := func(when string) {
		t.Helper()
		flush(t, conn)
		const adhoc = "SELECT id, customer, qty, note FROM orders"
		if diff := testutil.RowsDiff(t, conn, adhoc, pg, adhoc); diff != "" {
			t.Fatalf("seed %d, %s: the Debezium stream read ad hoc has %s", seed, when, diff)
		}
		for _, v := range views {
			if diff := testutil.RowsDiff(t, conn, "SELECT * FROM "+v.name, pg, v.query); diff != "" {
				t.Fatalf("seed %d, %s: view %s has %s", seed, when, v.name, diff)
			}
		}
	}
	_, js = testutil.JetStream(t, srv.NATSURL())
	for range 20 { // the snapshot
		insert("r", "true")
	}
	round(150)
	compare("first round")
	// A schema change event (published on the server's topic, here on
	// the table's subject) is skipped; the columns stay.
	publish([]byte(`{"source": {"version": "2.7.3.Final", "connector": "postgresql", "name": "dbz", "db": "postgres", "schema": "public", "table": "orders"},
		"databaseName": "postgres", "schemaName": "public", "ddl": "ALTER TABLE orders ADD COLUMN extra int",
		"tableChanges": [{"type": "ALTER", "id": "\"public\".\"orders\""}]}`))
	flush(t, conn)
	if got := textRows(t, conn, "SELECT count(*) > 0 FROM streamdb_view_errors WHERE view = 'orders' AND error LIKE '%schema change event%'"); len(got) != 1 || got[0] != "t" {
		t.Errorf("the schema change event is not listed among the skipped messages: %v", got)
	}
	round(150)
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	compare("after kill -9")
	// A truncate removes every row.
	apply("TRUNCATE orders")
	rows = map[int]row{}
	event("t", nil, nil, "false")
	round(100)
	compare("after a truncate and a round")
	exec(t, conn, "SAVEPOINT before_last_round")
	round(100)
	compare("before ROLLBACK TO SAVEPOINT")
	exec(t, conn, "ROLLBACK TO SAVEPOINT before_last_round")
	compare("after ROLLBACK TO SAVEPOINT")
}

// TestEnvelopeStreamKeepsItsInput: a stream with an envelope is stored as
// a table, but its subject is its producers' input: purges after
// checkpoints leave it whole, as a stream's, unless it is created with
// retention = 'consumed' (or altered to it); then what its rows hold is
// purged, and its rows stay, across a restart.
func TestEnvelopeStreamKeepsItsInput(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn,
		`CREATE STREAM kept (v int) INCLUDE subject_token 2 AS k WITH (subject = 'kept.*', envelope = 'upsert', key = 'k')`,
		`CREATE STREAM dbz_kept (id int PRIMARY KEY, v int) WITH (subject = 'dbz.kept', envelope = 'debezium')`,
		`CREATE STREAM drained (v int) INCLUDE subject_token 2 AS k WITH (subject = 'drained.*', envelope = 'upsert', key = 'k', retention = 'consumed')`,
		`CREATE MATERIALIZED VIEW kept_sum AS SELECT sum(v) AS v FROM kept`)
	for i := range 10 {
		testutil.Publish(t, js, fmt.Sprintf("kept.k%d", i%3), fmt.Sprintf(`{"v": %d}`, i))
		testutil.Publish(t, js, fmt.Sprintf("drained.k%d", i%3), fmt.Sprintf(`{"v": %d}`, i))
		testutil.Publish(t, js, "dbz.kept", fmt.Sprintf(`{"before": null, "after": {"id": %d, "v": %d}, "op": "c"}`, i, i))
	}
	flush(t, conn)
	purgePassed(t, conn, js, "envelope")
	for _, subject := range []string{"kept.k0", "dbz.kept"} {
		if n, _ := jsState(t, js, subject); n != 10 {
			t.Errorf("the JetStream stream of %s holds %d messages after a purge, want all 10", subject, n)
		}
	}
	pollDrained(t, js, "drained.k0", 0)
	srv.Restart(t)
	conn = srv.Conn(t)
	wantRows(t, conn, "SELECT k, v FROM drained ORDER BY k", "k0 9", "k1 7", "k2 8")
	wantRows(t, conn, "SELECT k, v FROM kept ORDER BY k", "k0 9", "k1 7", "k2 8")
	wantRows(t, conn, "SELECT v FROM kept_sum", "24")
	wantRows(t, conn, "SELECT count(*) FROM dbz_kept", "10")
}

// TestEnvelopeStreamSubjectBelongsToIt: a stream with an envelope owns
// its subject as any stream does: another role may not declare a stream
// (with or without an envelope) on it and so read its messages.
func TestEnvelopeStreamSubjectBelongsToIt(t *testing.T) {
	srv := startServer(t)
	admin := srv.Conn(t)
	exec(t, admin,
		`CREATE STREAM salaries (amount int) INCLUDE subject_token 2 AS who WITH (subject = 'pay.*', envelope = 'upsert', key = 'who')`,
		"CREATE USER mallory",
		"GRANT CREATE ON DATABASE streamdb TO mallory")
	mallory := connectAs(t, srv, "mallory")
	wantExecCode(t, mallory, "CREATE STREAM peek (amount int) WITH (subject = 'pay.*')", "42501")
	wantExecCode(t, mallory, "CREATE STREAM peek (amount int) WITH (subject = 'pay.alice')", "42501")
	wantExecCode(t, mallory, `CREATE STREAM peek (amount int, who text) WITH (subject = 'pay.*', envelope = 'upsert', key = 'who')`, "42501")
	exec(t, admin, "CREATE STREAM pay_log (amount int) WITH (subject = 'pay.*')")
}
