package recovery

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestCrashDuringCommits kills streamdb with SIGKILL while 8 sessions commit
// transactions, each inserting a pair of rows (one into each of two tables)
// and moving an amount between two accounts. After the restart every
// acknowledged COMMIT is there exactly once, every pair is whole (both rows
// or neither), the accounts still sum to zero, and the views over the
// tables agree with the tables. A commit whose answer was lost in the
// crash may or may not be there, but only whole.
func TestCrashDuringCommits(t *testing.T) {
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	natsURL := testutil.StartNATS(t)
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL,
		ConfigFile: writeConfig(t, "execution.checkpointing.interval=200ms")})
	setup := srv.Conn(t)
	const accounts = 4
	testutil.MustExec(t, setup,
		"CREATE TABLE orders (id BIGINT PRIMARY KEY, session BIGINT)",
		"CREATE TABLE receipts (id BIGINT PRIMARY KEY, session BIGINT)",
		"CREATE TABLE accounts (id BIGINT PRIMARY KEY, balance BIGINT)",
		"CREATE MATERIALIZED VIEW order_count AS SELECT count(*) AS n FROM orders",
		"CREATE MATERIALIZED VIEW receipt_count AS SELECT count(*) AS n FROM receipts",
		"CREATE MATERIALIZED VIEW total_balance AS SELECT sum(balance) AS total FROM accounts")
	for a := 0; a < accounts; a++ {
		testutil.MustExec(t, setup, fmt.Sprintf("INSERT INTO accounts VALUES (%d, 0)", a))
	}

	const sessions = 8
	var mu sync.Mutex
	acked := map[int64]bool{}     // ids whose COMMIT returned success
	attempted := map[int64]bool{} // ids whose COMMIT was sent
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for s := 0; s < sessions; s++ {
		conn := srv.Conn(t)
		from, to := rng.IntN(accounts), rng.IntN(accounts)
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			for i := int64(0); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := int64(s)*1_000_000 + i
				mu.Lock()
				attempted[id] = true
				mu.Unlock()
				err := commitPair(conn, id, int64(s), from, to)
				var pe *pgconn.PgError
				if errors.As(err, &pe) && pe.Code == "40001" {
					continue // a concurrent transfer won; this one wrote nothing
				}
				if err != nil {
					return // the server died
				}
				mu.Lock()
				acked[id] = true
				mu.Unlock()
			}
		}(s)
	}
	time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond) // the kill moment, chosen by the seed, with commits running
	srv.Kill(t)
	close(stop)
	wg.Wait()
	srv.Restart(t)
	conn := srv.Conn(t)

	ids := func(table string) map[int64]bool {
		_, rows := mustQuery(t, conn, "SELECT id FROM "+table)
		out := map[int64]bool{}
		for _, r := range rows {
			out[atoi(t, r[0])] = true
		}
		return out
	}
	orders, receipts := ids("orders"), ids("receipts")
	mu.Lock()
	defer mu.Unlock()
	if len(acked) == 0 {
		t.Fatal("no commit was acknowledged before the kill")
	}
	var missing, extra, halves []int64
	for id := range acked {
		if !orders[id] {
			missing = append(missing, id)
		}
	}
	for id := range orders {
		if !attempted[id] {
			extra = append(extra, id)
		}
		if !receipts[id] {
			halves = append(halves, id)
		}
	}
	for id := range receipts {
		if !orders[id] {
			halves = append(halves, id)
		}
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
	if len(missing) > 0 || len(extra) > 0 || len(halves) > 0 {
		t.Fatalf("after the crash: %d acknowledged commits missing (%v), %d rows never written (%v), %d half transactions (%v)",
			len(missing), head(missing), len(extra), head(extra), len(halves), head(halves))
	}
	wantRow(t, conn, "SELECT sum(balance) FROM accounts", "0")
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT n FROM order_count", fmt.Sprint(len(orders)))
	wantRow(t, conn, "SELECT n FROM receipt_count", fmt.Sprint(len(receipts)))
	wantRow(t, conn, "SELECT total FROM total_balance", "0")
	t.Logf("%d commits acknowledged, %d present after the crash", len(acked), len(orders))
}

// commitPair inserts id into orders and receipts and moves 1 from account
// from to account to, in one transaction.
func commitPair(conn *pgx.Conn, id, session int64, from, to int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, sql := range []string{
		fmt.Sprintf("INSERT INTO orders VALUES (%d, %d)", id, session),
		fmt.Sprintf("INSERT INTO receipts VALUES (%d, %d)", id, session),
		fmt.Sprintf("UPDATE accounts SET balance = balance - 1 WHERE id = %d", from),
		fmt.Sprintf("UPDATE accounts SET balance = balance + 1 WHERE id = %d", to),
	} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

func head(ids []int64) []int64 {
	if len(ids) > 10 {
		return ids[:10]
	}
	return ids
}
