package cluster

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// groupRestoreDDL is run in this order on both servers, so that their
// objects get the same ids: stream ev1 read by v1 (group 1), stream ev2
// read by v2, which v3 reads (group 2).
var groupRestoreDDL = []string{
	"CREATE STREAM ev1 (id BIGINT, g VARCHAR, x BIGINT) WITH (subject = 'grp.ev1', format = 'json')",
	"CREATE STREAM ev2 (id BIGINT, g VARCHAR, x BIGINT) WITH (subject = 'grp.ev2', format = 'json')",
	"CREATE MATERIALIZED VIEW v1 AS SELECT g, count(*) AS n, sum(x) AS s FROM ev1 GROUP BY g",
	"CREATE MATERIALIZED VIEW v2 AS SELECT g, count(*) AS n, sum(x) AS s FROM ev2 GROUP BY g",
	"CREATE MATERIALIZED VIEW v3 AS SELECT count(*) AS groups, sum(n) AS n, sum(s) AS s FROM v2",
}

type evRow struct {
	id int
	g  string
	x  int
}

func genEvents(rng *rand.Rand, from, n int) []evRow {
	out := make([]evRow, n)
	for i := range out {
		out[i] = evRow{id: from + i, g: fmt.Sprintf("g%d", rng.IntN(7)), x: rng.IntN(1000)}
	}
	return out
}

func insertEvents(t *testing.T, conn *pgx.Conn, stream string, rows []evRow) {
	t.Helper()
	for len(rows) > 0 {
		n := min(200, len(rows))
		var vals []string
		for _, r := range rows[:n] {
			vals = append(vals, fmt.Sprintf("(%d, '%s', %d)", r.id, r.g, r.x))
		}
		testutil.MustExec(t, conn, fmt.Sprintf("INSERT INTO %s VALUES %s", stream, strings.Join(vals, ", ")))
		rows = rows[n:]
	}
}

// wantViews computes what v1 (over ev1) or v2 and v3 (over ev2) hold, as
// sorted text rows.
func wantPerG(rows []evRow) []string {
	n, s := map[string]int{}, map[string]int{}
	for _, r := range rows {
		n[r.g]++
		s[r.g] += r.x
	}
	var out []string
	for g := range n {
		out = append(out, fmt.Sprintf("%s|%d|%d", g, n[g], s[g]))
	}
	sort.Strings(out)
	return out
}

func wantTotal(rows []evRow) []string {
	gs := map[string]bool{}
	s := 0
	for _, r := range rows {
		gs[r.g] = true
		s += r.x
	}
	if len(rows) == 0 {
		return []string{"0|NULL|NULL"}
	}
	return []string{fmt.Sprintf("%d|%d|%d", len(gs), len(rows), s)}
}

func viewRows(t *testing.T, conn *pgx.Conn, q string) []string {
	t.Helper()
	_, rows, err := testutil.QueryText(conn, 30*time.Second, q, "NULL")
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, strings.Join(r, "|"))
	}
	sort.Strings(out)
	return out
}

const (
	qV1 = "SELECT g, n, s FROM v1"
	qV2 = "SELECT g, n, s FROM v2"
	qV3 = "SELECT groups, n, s FROM v3"
)

// newestGroupCheckpoint is the newest checkpoint directory of a server
// that holds view-group manifests.
func newestGroupCheckpoint(t *testing.T, dataDir string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(dataDir, "checkpoints", "chk-*", "groups", "MANIFEST.json"))
	if len(dirs) == 0 {
		t.Fatalf("no checkpoint with view-group manifests under %s", dataDir)
	}
	slices.Sort(dirs)
	return filepath.Dir(filepath.Dir(dirs[len(dirs)-1]))
}

// TestGroupRestoreOnAnotherServer: server A runs two view-groups over two
// streams and checkpoints; server B, with the same DDL on the same NATS,
// stopped meanwhile, restores only group 2 from A's checkpoint: v2 and v3
// then hold A's rows at the checkpoint while v1 keeps B's own (empty)
// state, and once B's epochs run, every view of both servers equals the
// answer over all input, including input published after the checkpoint
// (which B reads from the checkpoint's cuts, not from the start).
func TestGroupRestoreOnAnotherServer(t *testing.T) {
	seed := testutil.Seed(t, "STREAMDB_TEST_SEED")
	rng := rand.New(rand.NewPCG(seed, 45))
	natsURL := testutil.StartNATS(t)
	a := testutil.StartServer(t, testutil.ServerOptions{NATSURL: natsURL,
		Env: []string{"STREAMDB_STATE_CHECKPOINTS_VIEW_GROUPS=true"}})
	ca := a.Conn(t)
	testutil.MustExec(t, ca, groupRestoreDDL...)
	b := testutil.StartServer(t, testutil.ServerOptions{NATSURL: natsURL})
	cb := b.Conn(t)
	testutil.MustExec(t, cb, groupRestoreDDL...)
	cb.Close(testutil.Context(t, 5*time.Second))
	b.Stop(t)

	ev1 := genEvents(rng, 1, 300)
	ev2 := genEvents(rng, 1, 400)
	insertEvents(t, ca, "ev1", ev1)
	insertEvents(t, ca, "ev2", ev2)
	testutil.MustExec(t, ca, "FLUSH", "CHECKPOINT")
	chk := newestGroupCheckpoint(t, a.DataDir)
	atCheckpoint := map[string][]string{qV2: viewRows(t, ca, qV2), qV3: viewRows(t, ca, qV3)}
	if want := wantPerG(ev2); !slices.Equal(atCheckpoint[qV2], want) {
		t.Fatalf("server A v2 at its checkpoint: %q, want %q", atCheckpoint[qV2], want)
	}
	// Input after the checkpoint: B must read it from the cuts on.
	more1, more2 := genEvents(rng, 1000, 150), genEvents(rng, 1000, 250)
	insertEvents(t, ca, "ev1", more1)
	insertEvents(t, ca, "ev2", more2)

	// B comes back with epochs held (an hour between barriers): its views
	// show what its store holds, nothing of the input yet.
	b.SetEnv("STREAMDB_EXECUTION_BARRIER_INTERVAL=1h")
	b.Restart(t)
	cb = b.Conn(t)
	if got := viewRows(t, cb, qV1); len(got) != 0 {
		t.Fatalf("server B v1 before any epoch: %q, want no rows", got)
	}
	// The restore reads only under B's data directory: A's checkpoint is
	// copied there, as an operator would copy or download it.
	testutil.CopyDir(t, chk, filepath.Join(b.DataDir, "restore", filepath.Base(chk)))
	chkB := filepath.Join("restore", filepath.Base(chk))
	testutil.MustExec(t, cb, fmt.Sprintf("ALTER MATERIALIZED VIEW v3 RESTORE GROUP FROM '%s'", chkB))
	for q, want := range atCheckpoint {
		if got := viewRows(t, cb, q); !slices.Equal(got, want) {
			t.Errorf("server B %s right after the restore: %q, want A's at the checkpoint %q", q, got, want)
		}
	}
	if got := viewRows(t, cb, qV1); len(got) != 0 {
		t.Errorf("server B v1 (group 1, not restored): %q, want its own state, no rows", got)
	}

	testutil.MustExec(t, cb, "SET execution.barrier.interval = '20ms'")
	all1, all2 := append(slices.Clone(ev1), more1...), append(slices.Clone(ev2), more2...)
	waitEqual := func(c *pgx.Conn, who string, all1, all2 []evRow) {
		t.Helper()
		want := map[string][]string{qV1: wantPerG(all1), qV2: wantPerG(all2), qV3: wantTotal(all2)}
		testutil.Poll(t, 60*time.Second, who+"'s views to equal the answer over all input", func() error {
			testutil.MustExec(t, c, "FLUSH")
			for _, q := range []string{qV1, qV2, qV3} {
				if got := viewRows(t, c, q); !slices.Equal(got, want[q]) {
					return fmt.Errorf("%s: %q, want %q", q, got, want[q])
				}
			}
			return nil
		})
	}
	waitEqual(cb, "server B", all1, all2)
	waitEqual(ca, "server A", all1, all2)

	// Both keep going with new input, through either server.
	last1, last2 := genEvents(rng, 2000, 100), genEvents(rng, 2000, 100)
	insertEvents(t, cb, "ev1", last1[:50])
	insertEvents(t, ca, "ev1", last1[50:])
	insertEvents(t, cb, "ev2", last2)
	all1, all2 = append(all1, last1...), append(all2, last2...)
	waitEqual(cb, "server B", all1, all2)
	waitEqual(ca, "server A", all1, all2)

	// Bad input: a directory that is no checkpoint, and a view of the
	// wrong group's layout, are refused with what to change.
	empty := filepath.Join(b.DataDir, "restore", "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	err := testutil.ExecSimple(cb, 30*time.Second, "ALTER MATERIALIZED VIEW v3 RESTORE GROUP FROM 'restore/empty'")
	testutil.WantCode(t, err, "58P01", "restore from a directory without manifests")
	for _, outside := range []string{chk, "../" + filepath.Base(chk), "/etc"} {
		err = testutil.ExecSimple(cb, 30*time.Second, fmt.Sprintf("ALTER MATERIALIZED VIEW v3 RESTORE GROUP FROM '%s'", outside))
		testutil.WantCode(t, err, "42501", "restore from "+outside+", outside the data directory")
	}
	damaged := filepath.Join(b.DataDir, "restore", "damaged")
	testutil.CopyDir(t, chk, damaged)
	spans, _ := filepath.Glob(filepath.Join(damaged, "groups", "*.span"))
	for _, p := range spans {
		data, _ := os.ReadFile(p)
		data[len(data)/2] ^= 0x40
		os.WriteFile(p, data, 0o644)
	}
	err = testutil.ExecSimple(cb, 30*time.Second, fmt.Sprintf("ALTER MATERIALIZED VIEW v2 RESTORE GROUP FROM '%s'", damaged))
	testutil.WantCode(t, err, "XX001", "restore from damaged span files")
	err = testutil.ExecSimple(cb, 30*time.Second, fmt.Sprintf("ALTER MATERIALIZED VIEW nope RESTORE GROUP FROM '%s'", chkB))
	testutil.WantCode(t, err, "42P01", "restore the group of a view that does not exist")
	err = testutil.ExecSimple(cb, 30*time.Second, fmt.Sprintf("BEGIN; ALTER MATERIALIZED VIEW v2 RESTORE GROUP FROM '%s'; COMMIT", chkB))
	testutil.WantCode(t, err, "25001", "restore inside a transaction block")
	testutil.MustExec(t, cb, "ROLLBACK")
	// The refused restores stopped nothing.
	waitEqual(cb, "server B after refused restores", all1, all2)
}
