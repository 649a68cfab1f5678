package recovery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestPGSourceCopyBounded copies a source table of ~150 MiB of text
// through CREATE SOURCE while transactions change it on the source, and
// checks that the server's peak memory grows by much less than the table
// (the copy is read and written in chunks, not held whole) and that the
// mirror then equals the source row by row: the copy at the slot's
// snapshot and the changes after it, none lost or applied twice. Then,
// with the slot moved past what the mirror holds, the source copies the
// table again over the mirror, and the mirror equals the source again.
func TestPGSourceCopyBounded(t *testing.T) {
	const (
		rows = 150_000
		// The memory the copy may add to the server's peak: the chunks in
		// flight and the collector's headroom over them take 250-400 MiB
		// at any table size; holding this table whole takes 1.2 GiB and
		// more.
		maxGrowth = 700 << 20
	)
	seed := seedFor(t)
	pg := testutil.StartPostgresLogical(t)
	src := pg.Conn(t)
	testutil.MustExec(t, src,
		"CREATE TABLE big (k bigint PRIMARY KEY, v int NOT NULL, note text, pad text)",
		// note is NULL, empty or a word: the copy keeps the three apart.
		fmt.Sprintf(`INSERT INTO big SELECT g, 0, CASE g %% 3 WHEN 0 THEN NULL WHEN 1 THEN '' ELSE 'w' || g END,
			repeat(md5(g::text), 32) FROM generate_series(1, %d) g`, rows),
		"CREATE PUBLICATION pub FOR TABLE big")

	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, "SELECT 1")
	_, before := testutil.ProcessRSS(srv.PID())

	// Changes on the source while the copy runs: some land before the
	// slot's snapshot (in the copy), the rest in the stream after it.
	stop := make(chan struct{})
	loadDone := make(chan error, 1)
	go func() {
		r := rand.New(rand.NewPCG(seed, 3))
		c, err := pgx.Connect(context.Background(), pg.DSN())
		if err != nil {
			loadDone <- err
			return
		}
		defer c.Close(context.Background())
		for i := 0; ; i++ {
			select {
			case <-stop:
				loadDone <- nil
				return
			default:
			}
			k := r.IntN(rows+2000) + 1
			sql := fmt.Sprintf("INSERT INTO big VALUES (%d, 1, 'load', 'x') ON CONFLICT (k) DO UPDATE SET v = big.v + 1, note = 'load %d'", k, i)
			if i%7 == 0 {
				sql = fmt.Sprintf("DELETE FROM big WHERE k = %d", k)
			}
			if err := testutil.ExecSimple(c, 30*time.Second, sql); err != nil {
				loadDone <- err
				return
			}
		}
	}()
	testutil.MustExec(t, conn, fmt.Sprintf("CREATE SOURCE s FROM POSTGRES (CONNECTION '%s', PUBLICATION 'pub') FOR ALL TABLES", pg.DSN()))
	_, after := testutil.ProcessRSS(srv.PID())
	close(stop)
	if err := <-loadDone; err != nil {
		t.Fatalf("changing the source (seed %d): %v", seed, err)
	}
	t.Logf("server peak RSS %d MiB before CREATE SOURCE, %d MiB after", before>>20, after>>20)
	if after-before > maxGrowth {
		t.Errorf("the copy of a %d-row table (~150 MiB) raised the server's peak RSS from %d MiB to %d MiB; want at most %d MiB more",
			rows, before>>20, after>>20, maxGrowth>>20)
	}

	// caughtUp waits for the mirror to reach the source's position now.
	caughtUp := func(what string) {
		t.Helper()
		waitSourceCaughtUp(t, src, conn, what)
	}

	// Row by row, without pad (checked by its length and its value).
	same := func(when string) {
		t.Helper()
		q := "SELECT k, v, note, length(pad), pad = repeat(md5(k::text), 32) FROM big ORDER BY k"
		cols, want := mustQuery(t, src, q)
		_, got := mustQuery(t, conn, q)
		if d := diffRows(cols, want, got, nil); d != "" {
			t.Errorf("%s: the mirror differs from the source (seed %d; %d rows, source %d): %s", when, seed, len(got), len(want), d)
		}
	}
	caughtUp("the source to apply the changes made during the copy")
	same("after the copy")

	// The slot moved past what the mirror holds (as after ROLLBACK TO
	// SAVEPOINT): the source copies the table again, over what the mirror
	// holds (rows deleted since go), chunk by chunk.
	srv.Kill(t)
	testutil.Poll(t, time.Minute, "the slot to be let go", func() error {
		if n := testutil.Scalar(t, src, "SELECT count(*) FROM pg_replication_slots WHERE active"); n != "0" {
			return fmt.Errorf("%s active slots", n)
		}
		return nil
	})
	testutil.MustExec(t, src, "UPDATE big SET v = v + 10 WHERE k % 10 = 0", "DELETE FROM big WHERE k % 97 = 0",
		"SELECT pg_replication_slot_advance(slot_name, pg_current_wal_lsn()) FROM pg_replication_slots")
	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.MustExec(t, src, "UPDATE big SET note = 'after' WHERE k % 1000 = 1")
	caughtUp("the source to copy the table again and apply what followed")
	if !strings.Contains(srv.Logs(), "PostgreSQL source copies its tables again") {
		t.Errorf("the source did not copy its tables again after its slot moved past the mirror")
	}
	same("after copying again")
}
