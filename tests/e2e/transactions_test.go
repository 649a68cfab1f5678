package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// Tables keep PostgreSQL's transaction contract: a block's writes are
// published at COMMIT and discarded by ROLLBACK, an error aborts the block,
// savepoints inside it undo writes, and a block's reads see its own writes.
func TestTransactionBlocks(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE t1 (k BIGINT PRIMARY KEY, v1 BIGINT, v2 BIGINT)",
		"CREATE MATERIALIZED VIEW t1_sum AS SELECT count(*) AS n, sum(v1) AS s FROM t1",
		"INSERT INTO t1 VALUES (1, 1, 1)")

	t.Run("rollback discards", func(t *testing.T) {
		exec(t, conn, "BEGIN", "INSERT INTO t1 VALUES (77, 77, 77)")
		// Inside the block the table shows the row; the view (computed
		// from committed input) does not.
		wantRows(t, conn, "SELECT k FROM t1 ORDER BY k", "1", "77")
		wantRows(t, conn, "SELECT n, s FROM t1_sum", "1 1")
		exec(t, conn, "ROLLBACK")
		wantRows(t, conn, "SELECT * FROM t1 WHERE v1 = 77")
		wantRows(t, conn, "SELECT n, s FROM t1_sum", "1 1")
	})

	t.Run("driver rollback", func(t *testing.T) {
		ctx := testutil.Context(t, 30*time.Second)
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO t1 VALUES ($1, $2, $3)", 78, 78, 78); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "UPDATE t1 SET v2 = $1 WHERE k = $2", 5, 1); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		wantRows(t, conn, "SELECT * FROM t1 ORDER BY k", "1 1 1")
	})

	t.Run("error aborts the block", func(t *testing.T) {
		exec(t, conn, "BEGIN", "INSERT INTO t1 VALUES (2, 2, 2)")
		wantExecCode(t, conn, "SELECT 1/0", "22012")
		wantExecCode(t, conn, "INSERT INTO t1 VALUES (3, 3, 3)", "25P02")
		wantExecCode(t, conn, "SELECT 1", "25P02")
		tag, err := conn.Exec(testutil.Context(t, 10*time.Second), "COMMIT", pgx.QueryExecModeSimpleProtocol)
		if err != nil || tag.String() != "ROLLBACK" {
			t.Fatalf("COMMIT of an aborted block: tag %q, err %v; want tag ROLLBACK", tag, err)
		}
		wantRows(t, conn, "SELECT k FROM t1 ORDER BY k", "1")
		wantRows(t, conn, "SELECT n, s FROM t1_sum", "1 1")
	})

	t.Run("savepoints inside a block", func(t *testing.T) {
		exec(t, conn, "BEGIN",
			"INSERT INTO t1 VALUES (4, 4, 4)",
			"SAVEPOINT a",
			"INSERT INTO t1 VALUES (5, 5, 5)",
			"UPDATE t1 SET v1 = 100 WHERE k = 1",
			"ROLLBACK TO SAVEPOINT a")
		wantRows(t, conn, "SELECT * FROM t1 ORDER BY k", "1 1 1", "4 4 4")
		// An error after a savepoint: ROLLBACK TO it recovers the block.
		exec(t, conn, "SAVEPOINT b", "INSERT INTO t1 VALUES (6, 6, 6)")
		wantExecCode(t, conn, "INSERT INTO t1 VALUES (4, 0, 0)", "23505")
		wantExecCode(t, conn, "RELEASE SAVEPOINT b", "25P02")
		exec(t, conn, "ROLLBACK TO SAVEPOINT b",
			"UPDATE t1 SET v2 = 9 WHERE k = 4",
			"SAVEPOINT c", "DELETE FROM t1 WHERE k = 1", "RELEASE SAVEPOINT c",
			"COMMIT")
		wantRows(t, conn, "SELECT * FROM t1 ORDER BY k", "4 4 9")
		wantRows(t, conn, "SELECT n, s FROM t1_sum", "1 4")
	})

	t.Run("a block's statements build on each other", func(t *testing.T) {
		exec(t, conn, "BEGIN",
			"INSERT INTO t1 VALUES (10, 1, 0)",
			"UPDATE t1 SET v1 = v1 + 1 WHERE k = 10",
			"DELETE FROM t1 WHERE k = 4",
			"INSERT INTO t1 VALUES (4, 40, 0)",
			"UPDATE t1 SET k = k + 100")
		wantExecCode(t, conn, "INSERT INTO t1 VALUES (110, 0, 0)", "23505")
		exec(t, conn, "ROLLBACK")
		exec(t, conn, "BEGIN",
			"INSERT INTO t1 VALUES (10, 1, 0)",
			"UPDATE t1 SET v1 = v1 + 1 WHERE k = 10",
			"DELETE FROM t1 WHERE k = 4",
			"INSERT INTO t1 VALUES (4, 40, 0)",
			"UPDATE t1 SET k = k + 100",
			"COMMIT")
		wantRows(t, conn, "SELECT * FROM t1 ORDER BY k", "104 40 0", "110 2 0")
		wantRows(t, conn, "SELECT n, s FROM t1_sum", "2 42")
	})

	t.Run("stream inserts wait for COMMIT", func(t *testing.T) {
		exec(t, conn, "CREATE STREAM ev (x BIGINT)",
			"CREATE MATERIALIZED VIEW ev_n AS SELECT count(*) AS n FROM ev",
			"BEGIN", "INSERT INTO ev VALUES (1), (2)", "ROLLBACK",
			"BEGIN", "INSERT INTO ev VALUES (3)", "INSERT INTO t1 VALUES (500, 0, 0)", "COMMIT")
		wantRows(t, conn, "SELECT n FROM ev_n", "1")
		wantRows(t, conn, "SELECT k FROM t1 WHERE k = 500", "500")
	})
}

// A statement lands whole or not at all: a change too large for one
// changelog message is refused before anything is published.
func TestStatementAtomicity(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	big := strings.Repeat("x", 500_000)
	exec(t, conn,
		"CREATE TABLE lossy (id BIGINT PRIMARY KEY, t TEXT)",
		fmt.Sprintf("INSERT INTO lossy VALUES (1000, '%s')", big))

	wantExecCode(t, conn, "UPDATE lossy SET t = t||t||t WHERE id = 1000", "54000")
	wantRows(t, conn, "SELECT id, length(t) FROM lossy", "1000 500000")

	huge := strings.Repeat("y", 1_100_000)
	wantExecCode(t, conn, fmt.Sprintf("INSERT INTO lossy VALUES (200, 'small'), (201, '%s')", huge), "54000")
	wantRows(t, conn, "SELECT id FROM lossy ORDER BY id", "1000")

	// A duplicate key in the middle of a multi-row INSERT: nothing lands.
	wantExecCode(t, conn, "INSERT INTO lossy VALUES (300, 'a'), (1000, 'b'), (301, 'c')", "23505")
	wantRows(t, conn, "SELECT id FROM lossy ORDER BY id", "1000")
	// The server goes on serving.
	exec(t, conn, "INSERT INTO lossy VALUES (2, 'ok')")
	wantRows(t, conn, "SELECT id FROM lossy ORDER BY id", "2", "1000")
}

// A session reads its own writes in tables and in every view over them,
// without FLUSH.
func TestReadYourWrites(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE acct (id BIGINT PRIMARY KEY, bal BIGINT)",
		"CREATE STREAM clicks (id BIGINT)",
		"CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n, sum(bal) AS s FROM acct",
		"CREATE MATERIALIZED VIEW total2 AS SELECT n * 2 AS n2 FROM total",
		"CREATE MATERIALIZED VIEW clicks_n AS SELECT count(*) AS n FROM clicks")
	for i := 1; i <= 20; i++ {
		exec(t, conn, fmt.Sprintf("INSERT INTO acct VALUES (%d, %d)", i, i))
		wantRows(t, conn, "SELECT n, s FROM total", fmt.Sprintf("%d %d", i, i*(i+1)/2))
		wantRows(t, conn, "SELECT n2 FROM total2", fmt.Sprint(2*i))
		exec(t, conn, "INSERT INTO clicks VALUES (1)")
		wantRows(t, conn, "SELECT n FROM clicks_n", fmt.Sprint(i))
	}
	exec(t, conn, "UPDATE acct SET bal = 0 WHERE id <= 10")
	wantRows(t, conn, "SELECT n, s FROM total", "20 155")
	exec(t, conn, "SET read_your_writes = off")
	wantRows(t, conn, "SHOW read_your_writes", "off")
	wantExecCode(t, conn, "SET read_your_writes = maybe", "22023")
}

// Concurrent transactions that read and write the same rows never lose
// an update: each commit either lands on the state it read or fails with
// 40001, so the counters end at exactly the number of commits that
// succeeded.
func TestConcurrentTransactionsNoLostUpdate(t *testing.T) {
	srv := startServer(t)
	setup := srv.Conn(t)
	const keys = 5
	exec(t, setup, "CREATE TABLE counters (id BIGINT PRIMARY KEY, n BIGINT)",
		"CREATE MATERIALIZED VIEW counters_total AS SELECT sum(n) AS total FROM counters")
	for k := 0; k < keys; k++ {
		exec(t, setup, fmt.Sprintf("INSERT INTO counters VALUES (%d, 0)", k))
	}
	const sessions = 50
	deadline := time.Now().Add(4 * time.Second)
	var committed [keys]atomic.Int64
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for s := 0; s < sessions; s++ {
		conn := srv.Conn(t)
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i := 0; time.Now().Before(deadline); i++ {
				key := (s + i) % keys
				err := incrementOnce(ctx, conn, key)
				var pe *pgconn.PgError
				switch {
				case err == nil:
					committed[key].Add(1)
				case errors.As(err, &pe) && pe.Code == "40001":
					conflicts.Add(1)
				default:
					errs <- fmt.Errorf("session %d: %w", s, err)
					return
				}
			}
		}(s)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var want []string
	var total int64
	for k := 0; k < keys; k++ {
		n := committed[k].Load()
		total += n
		want = append(want, fmt.Sprintf("%d %d", k, n))
	}
	t.Logf("%d commits, %d serialization failures", total, conflicts.Load())
	if total == 0 {
		t.Fatal("no transaction committed")
	}
	wantRows(t, setup, "SELECT id, n FROM counters ORDER BY id", want...)
	flush(t, setup)
	wantRows(t, setup, "SELECT total FROM counters_total", fmt.Sprint(total))
}

// incrementOnce reads counter key and writes it back one higher, in one
// transaction.
func incrementOnce(ctx context.Context, conn *pgx.Conn, key int) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var n int64
	if err := tx.QueryRow(ctx, "SELECT n FROM counters WHERE id = $1", key).Scan(&n); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "UPDATE counters SET n = $1 WHERE id = $2", n+1, key); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// A transaction that writes two tables is seen whole by every view: a
// reader polling a view over both never sees one half of it.
func TestMultiTableCommitInOneEpoch(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE debit (id BIGINT PRIMARY KEY, amount BIGINT)",
		"CREATE TABLE credit (id BIGINT PRIMARY KEY, amount BIGINT)",
		`CREATE MATERIALIZED VIEW ledger AS
		   SELECT sum(amount) AS balance, count(*) AS entries FROM
		   (SELECT id, amount FROM credit UNION ALL SELECT id, -amount AS amount FROM debit) u`)
	reader := srv.Conn(t)
	exec(t, reader, "SET read_your_writes = off")
	stop := make(chan struct{})
	var readErr error
	var reads int
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for {
			select {
			case <-stop:
				return
			default:
			}
			rows, err := textRowsErr(ctx, reader, "SELECT coalesce(balance, 0), entries FROM ledger")
			if err != nil {
				readErr = err
				return
			}
			reads++
			if len(rows) != 1 {
				readErr = fmt.Errorf("ledger has %d rows", len(rows))
				return
			}
			var bal, entries int64
			fmt.Sscan(rows[0], &bal, &entries)
			if bal != 0 || entries%2 != 0 {
				readErr = fmt.Errorf("ledger shows half a transaction: balance %d, entries %d", bal, entries)
				return
			}
		}
	}()
	for i := 1; i <= 150; i++ {
		exec(t, conn, "BEGIN",
			fmt.Sprintf("INSERT INTO debit VALUES (%d, %d)", i, i),
			fmt.Sprintf("INSERT INTO credit VALUES (%d, %d)", i, i),
			"COMMIT")
	}
	close(stop)
	<-done
	if readErr != nil {
		t.Fatal(readErr)
	}
	wantRows(t, conn, "SELECT balance, entries FROM ledger", "0 300")
	t.Logf("%d reads of the ledger", reads)
}

// statement_timeout ends a statement with 57014, also FLUSH and a
// CREATE MATERIALIZED VIEW that is still backfilling, which then leaves
// nothing behind.
func TestStatementTimeout(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE STREAM big (id BIGINT, pad TEXT)")
	_, js := testutil.JetStream(t, srv.NATSURL())
	ctx := testutil.Context(t, 2*time.Minute)
	pad := strings.Repeat("p", 100)
	publishMany(t, js, "big", 200_000, func(i int) string { return fmt.Sprintf(`{"id":%d,"pad":"%s"}`, i, pad) })

	exec(t, conn, "SET statement_timeout = '50ms'")
	wantRows(t, conn, "SHOW statement_timeout", "50ms")
	_, err := conn.Exec(ctx, "CREATE MATERIALIZED VIEW slow AS SELECT id % 7 AS k, count(*) AS n FROM big GROUP BY id % 7", pgx.QueryExecModeSimpleProtocol)
	pe := wantCode(t, err, "57014")
	if pe != nil && !strings.Contains(pe.Message, "statement timeout") {
		t.Errorf("message %q does not name the statement timeout", pe.Message)
	}
	exec(t, conn, "RESET statement_timeout")
	wantExecCode(t, conn, "SELECT * FROM slow", "42P01")

	exec(t, conn, "CREATE MATERIALIZED VIEW quick AS SELECT count(*) AS n FROM big",
		"ALTER SYSTEM PAUSE")
	publishMany(t, js, "big", 200_000, func(i int) string { return fmt.Sprintf(`{"id":%d,"pad":"%s"}`, i, pad) })
	exec(t, conn, "ALTER SYSTEM RESUME", "SET statement_timeout = 1")
	wantExecCode(t, conn, "FLUSH", "57014")
	wantExecCode(t, conn, "SET statement_timeout = '5 parsecs'", "22023")
	exec(t, conn, "RESET statement_timeout", "FLUSH")
	wantRows(t, conn, "SELECT n FROM quick", "400000")
}

// With JetStream full, a failed INSERT leaves nothing behind: the table
// holds exactly the rows of the statements that succeeded.
func TestStatementAtomicityJetStreamFull(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE full_t (id BIGINT PRIMARY KEY, pad TEXT)")
	_, js := testutil.JetStream(t, srv.NATSURL())
	ctx := testutil.Context(t, time.Minute)
	name, err := js.StreamNameBySubject(ctx, "streamdb.table.full_t")
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := stream.CachedInfo().Config
	cfg.MaxBytes = 64 << 10
	cfg.Discard = jetstream.DiscardNew
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("z", 1000)
	ok, failed := 0, 0
	for i := 0; i < 40; i++ {
		_, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO full_t VALUES (%d, '%s'), (%d, '%s'), (%d, '%s')",
			3*i, pad, 3*i+1, pad, 3*i+2, pad), pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			failed++
			continue
		}
		ok++
	}
	if failed == 0 || ok == 0 {
		t.Fatalf("%d INSERTs succeeded and %d failed; the test needs both", ok, failed)
	}
	wantRows(t, conn, "SELECT count(*) FROM full_t", fmt.Sprint(3*ok))
	// Every statement's three rows are there together, or none is.
	wantRows(t, conn, "SELECT count(*) FROM (SELECT id / 3 AS stmt, count(*) AS n FROM full_t GROUP BY id / 3) s WHERE n <> 3", "0")
}

// After ROLLBACK TO SAVEPOINT, a table's changelog replays what came after
// the savepoint; reads wait for the replay instead of showing the
// savepoint's rows in the meantime.
func TestReadsWaitForReplayAfterRollback(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE r (id BIGINT PRIMARY KEY)",
		"CREATE MATERIALIZED VIEW r_n AS SELECT count(*) AS n FROM r",
		"INSERT INTO r VALUES (1)",
		"SAVEPOINT sp1")
	for i := 2; i <= 200; i++ {
		exec(t, conn, fmt.Sprintf("INSERT INTO r VALUES (%d)", i))
	}
	exec(t, conn, "ROLLBACK TO SAVEPOINT sp1")
	wantRows(t, conn, "SELECT count(*) FROM r", "200")
	wantRows(t, conn, "SELECT n FROM r_n", "200")
	// While paused, nothing replays: the table shows the savepoint's rows.
	exec(t, conn, "ALTER SYSTEM PAUSE", "ROLLBACK TO SAVEPOINT sp1")
	wantRows(t, conn, "SELECT count(*) FROM r", "1")
	exec(t, conn, "ALTER SYSTEM RESUME")
	wantRows(t, conn, "SELECT count(*) FROM r", "200")
}
