package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// TestDebeziumTransactionsWhole publishes source transactions over two
// tables in the shapes Debezium Server gives them with
// provide.transaction.metadata on: a BEGIN event on the transaction topic,
// the change events (each with its transaction block) on the tables'
// topics, an END event with the counts; all in one JetStream stream.
// Every transaction moves amounts between rows of both tables (updates,
// and rows moved from one table to the other as delete, tombstone and
// create), so the sum and the count over both never change. While they
// are published, a second session reads a view over both streams and both
// streams in one query, with FLUSHes and checkpoints in between: a transaction must
// never show in part. streamdb is killed with -9 in the middle of a
// transaction; at the end both streams and the view equal PostgreSQL 15
// given the same transactions.
func TestDebeziumTransactionsWhole(t *testing.T) {
	const seed = 4104
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	const rows, start = 30, 100
	total := fmt.Sprintf("%d %d", 2*rows*start, 2*rows)

	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t).Conn(t)
	// Debezium Server's sink keeps every topic of the server in one
	// JetStream stream (subjects 'bank.>').
	exec(t, conn, `CREATE STREAM bank_events (status text) WITH (subject = 'bank.>')`)
	for _, tbl := range []string{"acct_a", "acct_b"} {
		exec(t, conn, fmt.Sprintf(`CREATE STREAM %s (id int PRIMARY KEY, bal int)
			WITH (subject = 'bank.public.%s', envelope = 'debezium', transaction_subject = 'bank.transaction')`, tbl, tbl))
		exec(t, pg, fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, bal int)", tbl))
	}
	wantExecCode(t, conn, `CREATE STREAM bad_txn (id int PRIMARY KEY) WITH (subject = 'other.public.t', envelope = 'debezium', transaction_subject = 'bank.transaction')`, "55000")
	wantExecCode(t, conn, `CREATE STREAM bad_env (id int PRIMARY KEY) WITH (subject = 'bank.public.u', envelope = 'upsert', transaction_subject = 'bank.transaction')`, "22023")
	const view = "SELECT sum(bal) AS s, count(*) AS n FROM (SELECT bal FROM acct_a UNION ALL SELECT bal FROM acct_b) u"
	exec(t, conn, "CREATE MATERIALIZED VIEW bank_total AS "+view)

	var js jetstream.JetStream
	connect := func() { _, js = testutil.JetStream(t, srv.NATSURL()) }
	connect()
	publish := func(subject string, v any) {
		t.Helper()
		var b []byte
		if v != nil {
			if rng.Intn(3) == 0 {
				v = map[string]any{"schema": map[string]any{"type": "struct", "optional": false}, "payload": v}
			}
			var err error
			if b, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := js.Publish(testutil.Context(t, time.Minute), subject, b); err != nil {
			t.Fatalf("publish to %s: %v", subject, err)
		}
	}
	bal := map[string]map[int]int{"acct_a": {}, "acct_b": {}}
	apply := func(sql string, args ...any) {
		t.Helper()
		if _, err := pg.Exec(testutil.Context(t, time.Minute), sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	lsn, txID := 5000, 700
	source := func(table string) map[string]any {
		lsn += 8
		return map[string]any{"version": "2.7.3.Final", "connector": "postgresql", "name": "bank", "ts_ms": 1733400000000 + lsn,
			"snapshot": "false", "db": "postgres", "sequence": fmt.Sprintf(`["%d","%d"]`, lsn-1, lsn), "schema": "public",
			"table": table, "txId": txID, "lsn": lsn, "xmin": nil}
	}
	// The snapshot: read events, outside any transaction.
	for _, tbl := range []string{"acct_a", "acct_b"} {
		for id := 1; id <= rows; id++ {
			bal[tbl][id] = start
			apply(fmt.Sprintf("INSERT INTO %s VALUES ($1, $2)", tbl), id, start)
			src := source(tbl)
			src["snapshot"] = "true"
			publish("bank.public."+tbl, map[string]any{"before": nil, "after": map[string]any{"id": id, "bal": start},
				"source": src, "op": "r", "ts_ms": 1733400000000 + lsn, "transaction": nil})
		}
	}
	flush(t, conn)
	if got := textRows(t, conn, "SELECT * FROM bank_total"); len(got) != 1 || got[0] != total {
		t.Fatalf("after the snapshot: %v, want %s", got, total)
	}

	ids := func(m map[int]int) []int {
		out := make([]int, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	type change struct {
		table, op   string
		before, aft map[string]any
	}
	// txn publishes one transaction; pause, when set, runs after part of
	// its change events.
	txn := func(pause func()) {
		t.Helper()
		txID++
		id := fmt.Sprintf("%d:%d", txID, lsn+8)
		var changes []change
		tables := []string{"acct_a", "acct_b"}
		for range 1 + rng.Intn(3) {
			from, to := tables[rng.Intn(2)], tables[rng.Intn(2)]
			fid, tid := 1+rng.Intn(rows), 1+rng.Intn(rows)
			fl, tl := ids(bal[from]), ids(bal[to])
			if len(fl) == 0 || len(tl) == 0 {
				continue
			}
			fid, tid = fl[fid%len(fl)], tl[tid%len(tl)]
			if from == to && fid == tid {
				continue
			}
			x := 1 + rng.Intn(9)
			changes = append(changes,
				change{from, "u", map[string]any{"id": fid, "bal": bal[from][fid]}, map[string]any{"id": fid, "bal": bal[from][fid] - x}},
			)
			bal[from][fid] -= x
			changes = append(changes,
				change{to, "u", map[string]any{"id": tid, "bal": bal[to][tid]}, map[string]any{"id": tid, "bal": bal[to][tid] + x}})
			bal[to][tid] += x
			apply(fmt.Sprintf("UPDATE %s SET bal = bal - $2 WHERE id = $1", from), fid, x)
			apply(fmt.Sprintf("UPDATE %s SET bal = bal + $2 WHERE id = $1", to), tid, x)
		}
		if from := tables[rng.Intn(2)]; rng.Intn(4) == 0 && len(bal[from]) > 1 {
			// A row moves to the other table under a new key.
			to := tables[0]
			if from == to {
				to = tables[1]
			}
			fl := ids(bal[from])
			fid := fl[rng.Intn(len(fl))]
			nid := 1000 + txID
			v := bal[from][fid]
			delete(bal[from], fid)
			bal[to][nid] = v
			apply(fmt.Sprintf("DELETE FROM %s WHERE id = $1", from), fid)
			apply(fmt.Sprintf("INSERT INTO %s VALUES ($1, $2)", to), nid, v)
			changes = append(changes, change{from, "d", map[string]any{"id": fid, "bal": nil}, nil},
				change{to, "c", nil, map[string]any{"id": nid, "bal": v}})
		}
		publish("bank.transaction", map[string]any{"status": "BEGIN", "id": id, "ts_ms": 1733400000000 + lsn, "event_count": nil, "data_collections": nil})
		counts := map[string]int{}
		for i, c := range changes {
			counts[c.table]++
			publish("bank.public."+c.table, map[string]any{"before": c.before, "after": c.aft, "source": source(c.table), "op": c.op,
				"ts_ms": 1733400000000 + lsn, "transaction": map[string]any{"id": id, "total_order": i + 1, "data_collection_order": counts[c.table]}})
			if c.op == "d" {
				publish("bank.public."+c.table, nil) // the tombstone
			}
			if pause != nil && i == len(changes)/2 {
				pause()
			}
		}
		var colls []any
		for _, tbl := range tables {
			if counts[tbl] > 0 {
				colls = append(colls, map[string]any{"data_collection": "public." + tbl, "event_count": counts[tbl]})
			}
		}
		publish("bank.transaction", map[string]any{"status": "END", "id": id, "ts_ms": 1733400000000 + lsn, "event_count": len(changes), "data_collections": colls})
	}

	// watch reads the sums in a session of its own until stop closes.
	watch := func(stop <-chan struct{}) *sync.WaitGroup {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			reads := 0
			defer func() { t.Logf("%d reads of the sums", reads) }()
			c, err := pgx.Connect(context.Background(), srv.DSN())
			if err != nil {
				t.Errorf("connect: %v", err)
				return
			}
			defer c.Close(context.Background())
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				for _, q := range []string{"SELECT * FROM bank_total",
					"SELECT (SELECT sum(bal) FROM acct_a) + (SELECT sum(bal) FROM acct_b), (SELECT count(*) FROM acct_a) + (SELECT count(*) FROM acct_b)"} {
					got, err := textRowsErr(ctx, c, q)
					if err != nil {
						t.Errorf("%s: %v", q, err)
						cancel()
						return
					}
					reads++
					if len(got) != 1 || got[0] != total {
						t.Errorf("seed %d: %s gives %v, want %s: part of a transaction is visible without the rest", seed, q, got, total)
					}
				}
				switch i % 20 {
				case 5:
					if _, err := c.Exec(ctx, "FLUSH"); err != nil {
						t.Errorf("FLUSH: %v", err)
					}
				case 10:
					if _, err := c.Exec(ctx, "CHECKPOINT"); err != nil {
						t.Errorf("CHECKPOINT: %v", err)
					}
				}
				cancel()
			}
		}()
		return &wg
	}

	stop := make(chan struct{})
	wg := watch(stop)
	for i := range 300 {
		var pause func()
		if i%25 == 0 {
			// Half a transaction stays published for a while: barriers
			// and checkpoints come and go in between.
			// (The pause shapes the load; nothing waits on it.)
			pause = func() { time.Sleep(100 * time.Millisecond) }
		}
		txn(pause)
	}
	flush(t, conn)
	close(stop)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// kill -9 in the middle of a transaction; the rest of it is published
	// to the restarted server.
	txn(func() {
		srv.Kill(t)
		srv.Restart(t)
		connect()
	})
	conn = srv.Conn(t)
	stop = make(chan struct{})
	wg = watch(stop)
	for range 100 {
		txn(nil)
	}
	flush(t, conn)
	close(stop)
	wg.Wait()

	for _, q := range []string{"SELECT id, bal FROM acct_a", "SELECT id, bal FROM acct_b"} {
		if diff := testutil.RowsDiff(t, conn, q, pg, q); diff != "" {
			t.Errorf("seed %d: %s has %s", seed, q, diff)
		}
	}
	if diff := testutil.RowsDiff(t, conn, "SELECT * FROM bank_total", pg, view); diff != "" {
		t.Errorf("seed %d: bank_total has %s", seed, diff)
	}
}
