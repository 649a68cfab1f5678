package recovery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestPGSourceMirrors mirrors two tables of a real PostgreSQL (wal_level
// logical) through CREATE SOURCE while random transactions (inserts,
// updates that change keys, deletes, truncates) run there, and checks
// row by row that each mirrored table equals its source: after a burst of
// load, after a kill -9 of streamdb in the middle of load, and after a
// restart of PostgreSQL in the middle of load. A view joining a mirrored
// table with a NATS stream equals PostgreSQL's answer over the same data,
// and DROP SOURCE drops the replication slot.
func TestPGSourceMirrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(seedFor(t), 1))
	pg := testutil.StartPostgresLogical(t)
	src := pg.Conn(t)
	testutil.MustExec(t, src,
		"CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, region text)",
		"CREATE TABLE orders (id int PRIMARY KEY, customer int, amount numeric(10,2), note text, at timestamptz)",
		"INSERT INTO customers SELECT g, 'c' || g, (ARRAY['eu','us','ap'])[g % 3 + 1] FROM generate_series(1, 50) g",
		"INSERT INTO orders SELECT g, g % 50 + 1, g * 1.25, repeat('n', g % 7), '2026-01-01'::timestamptz + g * interval '1 minute' FROM generate_series(1, 3000) g",
		"CREATE PUBLICATION shop FOR TABLE customers, orders",
		"CREATE TABLE clicks (customer int, n int)")

	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		fmt.Sprintf("CREATE SOURCE shop FROM POSTGRES (CONNECTION '%s', PUBLICATION 'shop') FOR TABLES (public.customers, public.orders AS shop_orders)", pg.DSN()),
		"CREATE STREAM clicks (customer int, n int) WITH (subject = 'clicks')",
		"CREATE MATERIALIZED VIEW region_totals AS SELECT c.region, count(*) AS orders, sum(o.amount) AS amount FROM shop_orders o JOIN customers c ON c.id = o.customer GROUP BY c.region",
		"CREATE MATERIALIZED VIEW clicks_by_name AS SELECT c.name, sum(k.n) AS n FROM clicks k JOIN customers c ON c.id = k.customer GROUP BY c.name")

	same := func(when string) {
		t.Helper()
		for _, q := range [][2]string{
			{"SELECT * FROM customers ORDER BY id", "SELECT * FROM customers ORDER BY id"},
			{"SELECT * FROM shop_orders ORDER BY id", "SELECT * FROM orders ORDER BY id"},
			{"SELECT * FROM region_totals ORDER BY region", "SELECT c.region, count(*) AS orders, sum(o.amount) AS amount FROM orders o JOIN customers c ON c.id = o.customer GROUP BY c.region ORDER BY region"},
		} {
			cols, want := mustQuery(t, src, q[1])
			testutil.Poll(t, 2*time.Minute, when+": "+q[0]+" to equal the source", func() error {
				_, got, err := queryText(conn, time.Minute, q[0])
				if err != nil {
					return err
				}
				if d := diffRows(cols, want, got, nil); d != "" {
					return fmt.Errorf("%d rows, source %d: %s", len(got), len(want), d)
				}
				return nil
			})
		}
	}
	same("after the initial copy")

	// load runs random transactions on the source until stop is closed.
	load := func(stop <-chan struct{}, seed uint64) *sync.WaitGroup {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 2))
			var c *pgx.Conn
			defer func() {
				if c != nil {
					c.Close(context.Background())
				}
			}()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if c == nil || c.IsClosed() {
					// The source restarts under the load: connect again.
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					c, _ = pgx.Connect(ctx, pg.DSN())
					cancel()
					if c == nil {
						time.Sleep(50 * time.Millisecond) // back off while the source is down
						continue
					}
				}
				_ = testutil.ExecSimple(c, 30*time.Second, randomSourceTxn(r, i))
			}
		}()
		return &wg
	}
	burst := func(what string, during func()) {
		stop := make(chan struct{})
		wg := load(stop, rng.Uint64())
		during()
		close(stop)
		wg.Wait()
		same(what)
	}
	waitApplied := func() {
		before := testutil.Scalar(t, conn, "SELECT applied_lsn FROM streamdb_sources")
		testutil.Poll(t, time.Minute, "the source to apply more", func() error {
			_, rows, err := queryText(conn, 10*time.Second, "SELECT applied_lsn, status FROM streamdb_sources")
			if err != nil {
				return err
			}
			if rows[0][0] == before {
				return fmt.Errorf("still at %s (%s)", before, rows[0][1])
			}
			return nil
		})
	}

	burst("after a burst of load", waitApplied)
	burst("after kill -9 of streamdb under load", func() {
		waitApplied()
		srv.Kill(t)
		srv.Restart(t)
		conn = srv.Conn(t)
		waitApplied()
	})
	burst("after a restart of PostgreSQL under load", func() {
		waitApplied()
		pg.Restart(t, "fast")
		src = pg.Conn(t)
		waitApplied()
	})
	burst("after TRUNCATE", func() {
		testutil.MustExec(t, src, "BEGIN", "TRUNCATE orders", "INSERT INTO orders SELECT g, g % 50 + 1, g, 'again', now() FROM generate_series(1, 100) g", "COMMIT")
		waitApplied()
	})

	// A mirrored table joins a NATS stream as any table does.
	for i := 0; i < 200; i++ {
		customer, n := rng.IntN(60)+1, rng.IntN(9)+1
		testutil.MustExec(t, conn, fmt.Sprintf("INSERT INTO clicks VALUES (%d, %d)", customer, n))
		testutil.MustExec(t, src, fmt.Sprintf("INSERT INTO clicks VALUES (%d, %d)", customer, n))
	}
	testutil.MustExec(t, conn, "FLUSH")
	cols, want := mustQuery(t, src, "SELECT c.name, sum(k.n) AS n FROM clicks k JOIN customers c ON c.id = k.customer GROUP BY c.name ORDER BY name")
	_, got := mustQuery(t, conn, "SELECT * FROM clicks_by_name ORDER BY name")
	if d := diffRows(cols, want, got, nil); d != "" {
		t.Errorf("clicks_by_name differs from PostgreSQL's answer: %s", d)
	}

	// Mirrored tables are the source's to change.
	for _, sql := range []string{"INSERT INTO customers VALUES (999, 'x', 'eu')", "DELETE FROM shop_orders", "TRUNCATE customers", "DROP TABLE customers", "ALTER TABLE customers RENAME TO c2", "ALTER TABLE customers ADD COLUMN x int"} {
		if err := testutil.ExecSimple(conn, time.Minute, sql); err == nil {
			t.Errorf("%s on a mirrored table succeeded; want it refused", sql)
		}
	}

	testutil.MustExec(t, conn, "DROP SOURCE shop CASCADE")
	if n := testutil.Scalar(t, src, "SELECT count(*) FROM pg_replication_slots"); n != "0" {
		t.Errorf("%s replication slots left on the source after DROP SOURCE, want 0", n)
	}
	if n := testutil.Scalar(t, conn, "SELECT count(*) FROM pg_class WHERE relname IN ('customers', 'shop_orders', 'shop_progress')"); n != "0" {
		t.Errorf("%s mirrored tables left after DROP SOURCE, want 0", n)
	}
}

// randomSourceTxn is one random transaction on the source: a few
// inserts, updates (some moving a row to a new key) and deletes.
func randomSourceTxn(r *rand.Rand, i int) string {
	var stmts []string
	for n := r.IntN(4) + 1; n > 0; n-- {
		id := r.IntN(4000) + 1
		switch r.IntN(6) {
		case 0, 1:
			stmts = append(stmts, fmt.Sprintf("INSERT INTO orders VALUES (%d, %d, %d.%02d, 'load %d', now()) ON CONFLICT (id) DO UPDATE SET amount = EXCLUDED.amount", id, r.IntN(60)+1, r.IntN(1000), r.IntN(100), i))
		case 2:
			stmts = append(stmts, fmt.Sprintf("UPDATE orders SET amount = amount + 1, note = note || 'u' WHERE id = %d", id))
		case 3:
			to := 4000 + r.IntN(4000)
			stmts = append(stmts, fmt.Sprintf("UPDATE orders SET id = %d WHERE id = %d AND NOT EXISTS (SELECT 1 FROM orders WHERE id = %d)", to, id, to))
		case 4:
			stmts = append(stmts, fmt.Sprintf("DELETE FROM orders WHERE id = %d", id))
		case 5:
			stmts = append(stmts, fmt.Sprintf("UPDATE customers SET region = '%s' WHERE id = %d", []string{"eu", "us", "ap", "af"}[r.IntN(4)], r.IntN(60)+1))
		}
	}
	return "BEGIN; " + strings.Join(stmts, "; ") + "; COMMIT"
}
