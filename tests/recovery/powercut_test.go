package recovery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
	"streamdb/tests/testutil/powercut"
)

// TestPowerCut runs streamdb with its whole data directory (Pebble, the
// checkpoints and the embedded NATS server's JetStream store) on a
// filesystem that keeps only what was fsynced (tests/testutil/powercut),
// and cuts the power several times while rows are inserted one by one
// and checkpoints complete every 100ms: SIGKILL, then only the durable
// image is left. The server must start on that image, the table must
// hold every row whose INSERT was acknowledged (and no row that was never
// sent), the views over it (one created before the first cut, one
// between cuts) must agree with the table, and a savepoint taken between
// cuts must still read as it did (and one released must stay released),
// and so must a setting changed by ALTER SYSTEM SET. The cut moments come from the
// seed. On failure the test lists what the last cut lost: each directory
// entry and file that was not fsynced.
func TestPowerCut(t *testing.T) {
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x9c17))
	fsys := powercut.Mount(t, filepath.Join(t.TempDir(), "data"), "")
	srv := startServer(t, testutil.ServerOptions{DataDir: fsys.Dir,
		ConfigFile: writeConfig(t, "execution.checkpointing.interval=100ms")})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE items (id BIGINT PRIMARY KEY, grp BIGINT, v BIGINT)",
		"CREATE MATERIALIZED VIEW items_by_grp AS SELECT grp, count(*) AS n, sum(v) AS total FROM items GROUP BY grp")

	// durable holds the rows that must be there after every cut: those
	// acknowledged, and those in doubt at a cut that came back from it.
	// sent holds every row an INSERT was sent for.
	durable, sent := map[int64]item{}, map[int64]item{}
	var lost []string // what the last cut lost, for a failure's report
	t.Cleanup(func() {
		if t.Failed() && lost != nil {
			t.Logf("the last power cut lost (%d paths):\n%s", len(lost), powercut.Summary(lost, 200))
		}
	})
	next := int64(1)
	start := time.Now()
	const cuts = 4
	bigView := false           // items_big exists
	var atSavepoint [][]string // items_by_grp AS OF SAVEPOINT kept, once taken
	var altered [][]string     // SHOW execution.progress.interval once altered
	for cut := 1; cut <= cuts; cut++ {
		switch cut {
		case 2:
			// An acknowledged CREATE must survive the cuts too.
			testutil.MustExec(t, conn, "CREATE MATERIALIZED VIEW items_big AS SELECT id, v FROM items WHERE v >= 500")
			bigView = true
		case 3:
			// So must a savepoint, a RELEASE and an ALTER SYSTEM SET.
			testutil.MustExec(t, conn, "FLUSH", "SAVEPOINT kept", "SAVEPOINT released", "RELEASE SAVEPOINT released",
				"ALTER SYSTEM SET execution.progress.interval = '250ms'")
			_, altered = mustQuery(t, conn, "SHOW execution.progress.interval")
			_, atSavepoint = mustQuery(t, conn, "SELECT grp, n, total FROM items_by_grp AS OF SAVEPOINT kept ORDER BY grp")
			if g, w := fmt.Sprint(atSavepoint), fmt.Sprint(groupRows(durable)); g != w {
				t.Fatalf("items_by_grp AS OF SAVEPOINT kept = %s right after it was taken, want %s", g, w)
			}
		}
		// Insert until at least two checkpoints have completed since the
		// cycle began, then a little longer (chosen by the seed), then
		// cut the power with an INSERT in flight.
		firstID := maxID(checkpoints(t, conn)) + 1
		extra := time.Duration(rng.IntN(400)) * time.Millisecond
		acked, inFlight, stopInserts := insertRows(t, srv, rng.Uint64(), &next, sent)
		testutil.Poll(t, 30*time.Second, "two checkpoints after the inserts began", func() error {
			done := 0
			for _, c := range checkpoints(t, conn) {
				if c.ID >= firstID && c.Status == "completed" {
					done++
				}
			}
			if done < 2 {
				return fmt.Errorf("%d completed", done)
			}
			return nil
		})
		time.Sleep(extra) // the cut moment, chosen by the seed, with inserts running
		srv.Kill(t)
		stopInserts()
		for id, it := range acked() {
			durable[id] = it
		}
		image := filepath.Join(t.TempDir(), fmt.Sprintf("image-%d", cut))
		var err error
		if lost, err = fsys.PowerCut(image); err != nil {
			t.Fatalf("power cut %d: %v", cut, err)
		}
		t.Logf("power cut %d at %v: %d rows acknowledged in all, INSERT of id %d in flight; the cut lost %d paths",
			cut, time.Since(start).Round(time.Millisecond), len(durable), inFlight(), len(lost))
		if err := fsys.Remount(image); err != nil {
			t.Fatalf("power cut %d: %v", cut, err)
		}
		srv.Restart(t)
		conn = srv.Conn(t)

		rows := tableRows(t, conn)
		var missing, unknown []string
		for id, it := range durable {
			if got, ok := rows[id]; !ok || got != it {
				missing = append(missing, fmt.Sprintf("%v (got %v, %v)", it, got, ok))
			}
		}
		for id, it := range rows {
			if sent[id] != it {
				unknown = append(unknown, fmt.Sprint(it))
			}
		}
		if len(missing) > 0 || len(unknown) > 0 {
			sort.Strings(missing)
			sort.Strings(unknown)
			t.Fatalf("after power cut %d: %d acknowledged rows missing or changed: %s; %d rows never sent: %s",
				cut, len(missing), firstFew(missing), len(unknown), firstFew(unknown))
		}
		// What came back is durable now, acknowledged or not.
		for id, it := range rows {
			durable[id] = it
		}
		testutil.MustExec(t, conn, "FLUSH")
		want := groupRows(rows)
		_, got := mustQuery(t, conn, "SELECT grp, n, total FROM items_by_grp ORDER BY grp")
		if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
			t.Fatalf("after power cut %d: items_by_grp = %s, want (from the table's %d rows) %s", cut, g, len(rows), w)
		}
		if altered != nil {
			if _, got := mustQuery(t, conn, "SHOW execution.progress.interval"); fmt.Sprint(got) != fmt.Sprint(altered) {
				t.Fatalf("after power cut %d: SHOW execution.progress.interval = %v, want %v as ALTER SYSTEM SET it", cut, got, altered)
			}
		}
		if atSavepoint != nil {
			_, got := mustQuery(t, conn, "SELECT grp, n, total FROM items_by_grp AS OF SAVEPOINT kept ORDER BY grp")
			if g, w := fmt.Sprint(got), fmt.Sprint(atSavepoint); g != w {
				t.Fatalf("after power cut %d: items_by_grp AS OF SAVEPOINT kept = %s, want %s as when it was taken", cut, g, w)
			}
			_, _, err := queryText(conn, time.Minute, "SELECT * FROM items_by_grp AS OF SAVEPOINT released")
			if err == nil {
				t.Fatalf("after power cut %d: a read AS OF the released savepoint answered, want 3B001: the RELEASE was acknowledged", cut)
			}
			if code := testutil.SQLState(err); code != "3B001" {
				t.Fatalf("after power cut %d: AS OF the released savepoint: %v (SQLSTATE %q), want 3B001", cut, err, code)
			}
		}
		if bigView {
			_, got := mustQuery(t, conn, "SELECT id, v FROM items_big ORDER BY id")
			if g, w := fmt.Sprint(got), fmt.Sprint(bigRows(rows)); g != w {
				t.Fatalf("after power cut %d: items_big = %s, want (from the table's %d rows) %s", cut, clip(g), len(rows), clip(w))
			}
		}
	}
}

// item is one row of the table items.
type item struct{ id, grp, v int64 }

// insertRows inserts rows one by one, in autocommit, from its own session
// until stopped (or the server is gone). ids come from *next; every row is
// recorded in sent before its INSERT goes out. acked returns the rows
// whose INSERT returned success; inFlight the id of an INSERT sent but not
// answered when the server went (0 if none). Call acked and inFlight only
// after stop.
func insertRows(t *testing.T, srv *testutil.Server, seed uint64, next *int64, sent map[int64]item) (acked func() map[int64]item, inFlight func() int64, stop func()) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	conn := srv.Conn(t)
	done := make(chan struct{})
	quit := make(chan struct{})
	var mu sync.Mutex
	ok := map[int64]item{}
	var pending int64
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
			}
			it := item{id: *next, grp: rng.Int64N(5), v: rng.Int64N(1000)}
			*next++
			mu.Lock()
			sent[it.id] = it
			pending = it.id
			mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO items VALUES (%d, %d, %d)", it.id, it.grp, it.v), pgx.QueryExecModeSimpleProtocol)
			cancel()
			if err != nil {
				return // the server is gone
			}
			mu.Lock()
			ok[it.id] = it
			pending = 0
			mu.Unlock()
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() { close(quit) })
		<-done
	}
	t.Cleanup(stop)
	return func() map[int64]item { return ok }, func() int64 { return pending }, stop
}

// tableRows returns the rows of items by id.
func tableRows(t *testing.T, conn *pgx.Conn) map[int64]item {
	t.Helper()
	_, rows := mustQuery(t, conn, "SELECT id, grp, v FROM items")
	out := map[int64]item{}
	for _, r := range rows {
		it := item{atoi(t, r[0]), atoi(t, r[1]), atoi(t, r[2])}
		out[it.id] = it
	}
	return out
}

// groupRows is items_by_grp computed from the table's rows, ordered by grp,
// in the server's text format.
func groupRows(rows map[int64]item) [][]string {
	n, total := map[int64]int64{}, map[int64]int64{}
	for _, it := range rows {
		n[it.grp]++
		total[it.grp] += it.v
	}
	var grps []int64
	for g := range n {
		grps = append(grps, g)
	}
	sort.Slice(grps, func(i, j int) bool { return grps[i] < grps[j] })
	out := [][]string{}
	for _, g := range grps {
		out = append(out, []string{fmt.Sprint(g), fmt.Sprint(n[g]), fmt.Sprint(total[g])})
	}
	return out
}

// bigRows is items_big computed from the table's rows, ordered by id.
func bigRows(rows map[int64]item) [][]string {
	var ids []int64
	for id, it := range rows {
		if it.v >= 500 {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := [][]string{}
	for _, id := range ids {
		out = append(out, []string{fmt.Sprint(id), fmt.Sprint(rows[id].v)})
	}
	return out
}

// clip shortens s for a failure message.
func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

func firstFew(s []string) string {
	if len(s) > 10 {
		return strings.Join(s[:10], ", ") + ", ..."
	}
	return strings.Join(s, ", ")
}
