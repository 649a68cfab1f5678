package recovery

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestDamagedLiveFileRecovers damages, in place, the largest sstable of the
// live state after a clean stop: the same file (a hard link) is in the
// newest checkpoint. The server must not crash-loop on Pebble's corruption
// report: it restarts itself, skips the checkpoints that hold the damaged
// file, recovers from the newest intact one, replays the tables'
// changelogs, says so loudly and counts it. A savepoint taken before holds
// copies of its files, not links to the live ones.
func TestDamagedLiveFileRecovers(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{
		ConfigFile: writeConfig(t, "execution.checkpointing.interval=0")})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, `CREATE TABLE t (id INT PRIMARY KEY, k INT, v TEXT)`)
	const batches, per = 4, 10000
	for i := range batches {
		testutil.MustExec(t, conn, fmt.Sprintf(
			`INSERT INTO t SELECT g, g %% 7, repeat('x', 40) || g FROM generate_series(%d, %d) g`, i*per+1, (i+1)*per),
			"CHECKPOINT")
	}
	testutil.MustExec(t, conn,
		`CREATE MATERIALIZED VIEW per_k AS SELECT k, count(*) AS n, sum(id) AS s FROM t GROUP BY k`,
		"CHECKPOINT", "SAVEPOINT before_damage")
	srv.Stop(t)

	spState := filepath.Join(srv.DataDir, "savepoints", "before_damage", "state")
	for _, f := range globSST(t, spState) {
		if n := links(t, f); n != 1 {
			t.Errorf("savepoint file %s has %d links: it shares its data with the live state", f, n)
		}
	}
	// The largest live file, one a checkpoint shares if there is one
	// (a compaction after the last checkpoint may have replaced them all).
	var victim string
	better := func(f string) bool {
		if victim == "" {
			return true
		}
		if (links(t, f) > 1) != (links(t, victim) > 1) {
			return links(t, f) > 1
		}
		return size(t, f) > size(t, victim)
	}
	for _, f := range globSST(t, filepath.Join(srv.DataDir, "state")) {
		if better(f) {
			victim = f
		}
	}
	shared := links(t, victim) > 1
	damageInPlace(t, victim)

	srv.Restart(t)
	want := fmt.Sprintf("%d %d", batches*per, sumRange(1, batches*per))
	testutil.Poll(t, 2*time.Minute, "recovery from the damaged state", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, srv.DSN())
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		// Reading every row reaches the damaged block, if no compaction
		// has yet.
		var table, view string
		if err := c.QueryRow(ctx, `SELECT count(*)::text || ' ' || sum(id)::text FROM t`).Scan(&table); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "FLUSH"); err != nil {
			return err
		}
		if err := c.QueryRow(ctx, `SELECT sum(n)::text || ' ' || sum(s)::text FROM per_k`).Scan(&view); err != nil {
			return err
		}
		if table != want || view != want {
			return fmt.Errorf("table %q, view %q, want %q", table, view, want)
		}
		if n := testutil.MetricValue(t, srv.Metrics(t), "streamdb_state_damage_recoveries_total"); n != 1 {
			return fmt.Errorf("streamdb_state_damage_recoveries_total = %v", n)
		}
		return nil
	})
	log := srv.Logs()
	if !strings.Contains(log, "RECOVERED FROM DAMAGED STATE") {
		t.Errorf("no loud log line about the recovery:\n%s", log[max(0, len(log)-4000):])
	}
	if shared && !strings.Contains(log, "skipping unusable checkpoint") {
		t.Errorf("recovery did not skip the checkpoint holding the damaged file:\n%s", log[max(0, len(log)-4000):])
	}
	if _, err := os.Stat(filepath.Join(srv.DataDir, "STATE-DAMAGED")); !os.IsNotExist(err) {
		t.Errorf("the damage marker is still there after recovery (%v)", err)
	}
	// The server goes on: a write after the recovery is read back.
	conn = srv.Conn(t)
	testutil.MustExec(t, conn, `INSERT INTO t VALUES (0, 0, 'after')`, "FLUSH")
	wantRow(t, conn, `SELECT n FROM per_k WHERE k = 0`, testutil.Scalar(t, conn, `SELECT count(*) FROM t WHERE k = 0`))
}

func globSST(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .sst files in %s (%v)", dir, err)
	}
	return files
}

func links(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(st.Sys().(*syscall.Stat_t).Nlink)
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// damageInPlace flips bytes in the middle of path without replacing the
// file, as a failing disk would: every hard link to it sees the damage.
func damageInPlace(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64)
	off := size(t, path) / 2
	if _, err := f.ReadAt(buf, off); err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] ^= 0xff
	}
	if _, err := f.WriteAt(buf, off); err != nil {
		t.Fatal(err)
	}
	t.Logf("damaged 64 bytes of %s (%d links) at offset %d", filepath.Base(path), links(t, path), off)
}
