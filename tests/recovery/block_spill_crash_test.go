package recovery

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// scratchDirs lists the scratch stores (a transaction block's spilled
// changes) under a server's data directory.
func scratchDirs(t testing.TB, dataDir string) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"scratch-*", "*/scratch-*"} {
		m, err := filepath.Glob(filepath.Join(dataDir, pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	return out
}

// spillNATSLimits scale the embedded NATS server down, so that
// a block of 30 MB meets what one of a few hundred MB meets at the
// defaults: its messages are of at most 256 KiB (max_payload, 1 MiB by
// default), so the commit's data takes over a hundred of them, and the
// server drops a client holding more than 4 MiB (max_pending, 64 MiB by
// default) as a slow consumer. A read of the commit's data that asked for
// 256 messages at once overran max_pending: the dropped connection failed
// the publishes under way and the reads of the commit after a restart.
// Its connection to NATS must not drop at all.
const spillNATSLimits = "STREAMDB_FAULT_SIZES=nats-max-payload=262144,nats-max-pending=4194304"

// natsDropped is what streamdb logs when its connection to NATS drops.
const natsDropped = "the connection to NATS dropped"

// TestCrashDuringSpilledBlockCommit runs transaction blocks of
// RECOVERY_BLOCK_ROWS rows of about 1 kB (30,000 by default, 30 MB;
// RECOVERY_BLOCK_ROWS=250000 is the few-hundred-MB run), in statements
// of up to 25,000 rows, under a transaction_spill_memory of 16MB, so
// they spill to disk, into a table a view reads (and a tenth as many
// into a table referencing it by a foreign key, also read by a view),
// and kills streamdb with SIGKILL
// during their COMMIT: once at the crash point between the data and the
// decision (nothing may land), once at a moment the seed picks within
// one and a half times what a COMMIT took. After each restart the block
// is there entirely or not at all (in both tables), the views agree
// with the tables, and
// no scratch store is left. The first block commits undisturbed; its
// scratch store is seen while it is open and gone after the COMMIT.
func TestCrashDuringSpilledBlockCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("blocks of a few hundred MB")
	}
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x5b1))
	n := testutil.EnvInt(t, "RECOVERY_BLOCK_ROWS", 30_000, 2)
	const stmtRows = 25_000
	srv := startServer(t, testutil.ServerOptions{
		ConfigFile: writeConfig(t, "execution.checkpointing.interval=1s"),
		Env:        []string{spillNATSLimits}})
	testutil.MustExec(t, srv.Conn(t),
		"CREATE TABLE blk (k BIGINT PRIMARY KEY, v BIGINT, pad TEXT)",
		"CREATE MATERIALIZED VIEW blk_sum AS SELECT count(*) AS n, sum(v) AS total FROM blk",
		"INSERT INTO blk SELECT g, g, 'base' FROM generate_series(1, 1000) g",
		"CREATE TABLE blkc (k BIGINT PRIMARY KEY, p BIGINT REFERENCES blk ON DELETE CASCADE, v BIGINT)",
		"CREATE MATERIALIZED VIEW blkc_sum AS SELECT count(*) AS n, sum(v) AS total FROM blkc")

	blk := summed{table: "blk", col: "v", view: "blk_sum"}
	blkc := summed{table: "blkc", col: "v", view: "blkc_sum"}
	nc := n / 10
	// open runs a block up to its COMMIT: n new rows of v = 1 under keys
	// of its own, v + 1 on the first 1,000 rows, and n/10 rows of blkc
	// referencing new rows (so the COMMIT checks a foreign key from the
	// spill).
	open := func(round int) *pgx.Conn {
		t.Helper()
		conn := srv.Conn(t)
		stmts := []string{"SET transaction_spill_memory = '16MB'", "BEGIN"}
		base := int64(round) * 10_000_000
		for from := int64(1); from <= n; from += stmtRows {
			to := min(from+stmtRows-1, n)
			stmts = append(stmts, fmt.Sprintf("INSERT INTO blk SELECT %d + g, 1, repeat('x', 1000) FROM generate_series(%d, %d) g", base, from, to))
		}
		stmts = append(stmts, "UPDATE blk SET v = v + 1 WHERE k <= 1000",
			fmt.Sprintf("INSERT INTO blkc SELECT %d + g, %d + g, 1 FROM generate_series(1, %d) g", base, base, nc))
		for _, sql := range stmts {
			if err := testutil.ExecSimple(conn, 10*time.Minute, sql); err != nil {
				t.Fatalf("round %d: %s: %v", round, sql, err)
			}
		}
		if len(scratchDirs(t, srv.DataDir)) == 0 {
			t.Fatalf("round %d: the open block spilled nothing to disk", round)
		}
		return conn
	}
	cur := sums{1000, 1000 * 1001 / 2}
	if table, view := blk.read(t, srv, "after the load"); table != cur || view != cur {
		t.Fatalf("after the load the table holds %+v, the view %+v; want %+v", table, view, cur)
	}
	// check checks a block after a restart: all of it or none, the view
	// agreeing, and no scratch store left.
	var curc sums
	check := func(what string, committed error) {
		t.Helper()
		prev := cur
		cur = blk.allOrNone(t, srv, what, cur, sums{cur.n + n, cur.sum + n + 1000}, committed)
		if cur != prev {
			curc = sums{curc.n + nc, curc.sum + nc}
		}
		if table, view := blkc.read(t, srv, what); table != curc || view != curc {
			t.Fatalf("%s: blkc holds %+v, its view %+v; want %+v (with blk)", what, table, view, curc)
		}
		if dirs := scratchDirs(t, srv.DataDir); len(dirs) > 0 {
			t.Fatalf("%s: scratch stores left: %v", what, dirs)
		}
		if strings.Contains(srv.Logs(), natsDropped) {
			t.Fatalf("%s: streamdb's connection to NATS dropped (the server's log says %q)", what, natsDropped)
		}
	}

	conn := open(1)
	start := time.Now()
	if err := testutil.ExecSimple(conn, 10*time.Minute, "COMMIT"); err != nil {
		t.Fatalf("round 1: COMMIT: %v", err)
	}
	took := time.Since(start)
	t.Logf("a COMMIT of %d rows took %v", n, took)
	check("round 1", nil)

	// At the crash point between the data and the decision.
	srv.SetEnv(spillNATSLimits, "STREAMDB_FAULTS=txn-before-decision")
	srv.Kill(t)
	srv.Restart(t)
	conn = open(2)
	err := testutil.ExecSimple(conn, 10*time.Minute, "COMMIT")
	if err == nil {
		t.Fatal("round 2: the COMMIT succeeded past the crash point")
	}
	srv.Kill(t) // reaps the process the crash point ended
	srv.SetEnv(spillNATSLimits)
	srv.Restart(t)
	if table, _ := blk.read(t, srv, "round 2"); table != cur {
		t.Fatalf("round 2: killed before the decision, the table holds %+v; want %+v", table, cur)
	}
	check("round 2, killed before the decision", err)

	// At a moment the seed picks.
	conn = open(3)
	delay := time.Duration(rng.Int64N(int64(took) * 3 / 2))
	done := make(chan error, 1)
	go func() { done <- testutil.ExecSimple(conn, 10*time.Minute, "COMMIT") }()
	time.Sleep(delay) // the kill moment after COMMIT is sent, chosen by the seed
	srv.Kill(t)
	err = <-done
	srv.Restart(t)
	check(fmt.Sprintf("round 3, killed %v after COMMIT was sent", delay), err)
}
