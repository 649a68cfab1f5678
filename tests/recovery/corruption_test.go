package recovery

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestCorruptCheckpointSkipped takes two checkpoints A and B by hand
// (periodic ones off), publishes more, kills the server, damages the newest
// checkpoint B and restarts: recovery must log that it skips B, restore A,
// replay from A's positions, and end with exact views after FLUSH. Files of
// a checkpoint are replaced (not written in place) when damaged, since
// sstables are hard links shared with the live state and older
// checkpoints.
func TestCorruptCheckpointSkipped(t *testing.T) {
	seed := seedFor(t)
	pg := testutil.StartPostgres(t)
	pgConn := pg.Conn(t)
	cases := []struct {
		name   string
		damage func(t *testing.T, a, b string) // checkpoint directories
		// skipped and restored name which checkpoints recovery must skip
		// ("A", "B") and use ("A", or "ddl" for the last DDL checkpoint).
		skipped  []string
		restored string
	}{
		{"truncated file", func(t *testing.T, a, b string) { truncateFile(t, largestFile(t, b)) }, []string{"B"}, "A"},
		{"flipped sst bytes", func(t *testing.T, a, b string) { flipBytes(t, someSST(t, b)) }, []string{"B"}, "A"},
		{"deleted metadata", func(t *testing.T, a, b string) {
			if err := os.Remove(filepath.Join(b, "_metadata.json")); err != nil {
				t.Fatal(err)
			}
		}, []string{"B"}, "A"},
		{"two newest damaged", func(t *testing.T, a, b string) {
			flipBytes(t, someSST(t, b))
			truncateFile(t, largestFile(t, a))
		}, []string{"B", "A"}, "ddl"},
	}
	for i, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			natsURL := testutil.StartNATS(t)
			srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL,
				ConfigFile: writeConfig(t, "execution.checkpointing.interval=0")})
			conn := srv.Conn(t)
			createWorkload(t, conn)
			ddl := checkpoints(t, conn)
			lastDDL := ddl[len(ddl)-1]
			_, js := testutil.JetStream(t, natsURL)
			gen := newGenerator(seed + uint64(i))
			var events []event
			step := func(n int, flush bool) {
				batch := gen.generate(n)
				publishEvents(t, js, batch)
				events = append(events, batch...)
				if flush {
					testutil.MustExec(t, conn, "FLUSH")
				}
			}
			step(3000, true)
			a := takeCheckpoint(t, conn)
			step(3000, true)
			b := takeCheckpoint(t, conn)
			step(3000, false)
			srv.Kill(t)

			tc.damage(t, a.Dir, b.Dir)
			srv.Restart(t)
			log := runLog(srv)
			dirOf := map[string]string{"A": a.Dir, "B": b.Dir, "ddl": lastDDL.Dir}
			for _, s := range tc.skipped {
				found := false
				for _, l := range logLines(log, "skipping unusable checkpoint") {
					found = found || logField(l, "dir") == filepath.Base(dirOf[s])
				}
				if !found {
					t.Errorf("log does not say it skipped damaged checkpoint %s (%s):\n%s", s, filepath.Base(dirOf[s]), log)
				}
			}
			rec := logLines(log, "recovering from checkpoint")
			if len(rec) != 1 || logField(rec[0], "dir") != dirOf[tc.restored] {
				t.Fatalf("want recovery from checkpoint %s (%s), log says %q", tc.restored, dirOf[tc.restored], rec)
			}
			t.Logf("skipped %v, recovered from %s", tc.skipped, filepath.Base(dirOf[tc.restored]))

			conn = srv.Conn(t)
			testutil.MustExec(t, conn, "FLUSH")
			resetPostgres(t, pgConn)
			loadPostgres(t, pgConn, events)
			compareViews(t, conn, pgConn, workloadViews)

			// The server goes on checkpointing after such a recovery, with
			// ids past the damaged ones.
			c := takeCheckpoint(t, conn)
			if c.ID <= b.ID {
				t.Errorf("checkpoint after recovery has id %d, not above the damaged checkpoint's %d", c.ID, b.ID)
			}
		})
	}
}

// resetPostgres drops the workload tables.
func resetPostgres(t testing.TB, pg *pgx.Conn) {
	t.Helper()
	if _, err := pg.Exec(testutil.Context(t, time.Minute), "DROP TABLE IF EXISTS orders, refunds"); err != nil {
		t.Fatal(err)
	}
}

// stateFiles lists the regular files under a checkpoint's state directory.
func stateFiles(t *testing.T, chk string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(chk, "state"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func largestFile(t *testing.T, chk string) string {
	t.Helper()
	var best string
	var size int64 = -1
	for _, f := range stateFiles(t, chk) {
		if st, err := os.Stat(f); err == nil && st.Size() > size {
			best, size = f, st.Size()
		}
	}
	if best == "" {
		t.Fatalf("no files in %s", chk)
	}
	return best
}

func someSST(t *testing.T, chk string) string {
	t.Helper()
	for _, f := range stateFiles(t, chk) {
		if strings.HasSuffix(f, ".sst") {
			return f
		}
	}
	t.Fatalf("no .sst file in %s", chk)
	return ""
}

// rewrite replaces path by a new file with the given content, breaking any
// hard link so that only this checkpoint's copy is damaged.
func rewrite(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".damage"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func truncateFile(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rewrite(t, path, data[:len(data)/2])
	t.Logf("truncated %s from %d to %d bytes", relChk(path), len(data), len(data)/2)
}

func flipBytes(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 16 {
		t.Fatalf("%s is too small to damage", path)
	}
	for _, off := range []int{len(data) / 3, len(data) / 2, len(data) * 2 / 3} {
		data[off] ^= 0xff
	}
	rewrite(t, path, data)
	t.Logf("flipped 3 bytes of %s (%d bytes)", relChk(path), len(data))
}

func relChk(path string) string {
	parts := strings.Split(path, string(filepath.Separator))
	for i, p := range parts {
		if strings.HasPrefix(p, "chk-") {
			return filepath.Join(parts[i:]...)
		}
	}
	return fmt.Sprint(path)
}
