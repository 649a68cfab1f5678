package savepoint

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestAsOfManyPointsConcurrently: four clients read AS OF six different
// savepoints at once (more points than the server keeps open). Every read
// must return that savepoint's state; never an error, a wrong answer or a
// dropped connection, and the server must still shut down cleanly.
func TestAsOfManyPointsConcurrently(t *testing.T) { asOfStress(t, 6, false) }

// TestReleaseWhileReadingAsOf: as TestAsOfManyPointsConcurrently with two
// points (no more than the server keeps open), while the clients also read
// AS OF a savepoint that another client takes and releases again and
// again: those reads must return its state or 3B001.
func TestReleaseWhileReadingAsOf(t *testing.T) { asOfStress(t, 2, true) }

func asOfStress(t *testing.T, points int, churn bool) {
	rng := seedFor(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, streamDDL("ev", "ev.many"),
		"CREATE MATERIALIZED VIEW totals AS "+viewQueries()["totals"],
		"CREATE MATERIALIZED VIEW per_g AS "+viewQueries()["per_g"])
	var all []row
	want := map[int]map[string][]string{}
	for k := 0; k < points; k++ {
		rows := genRows(rng, int64(len(all)+1), 20+rng.IntN(50))
		insert(t, conn, "ev", rows)
		all = append(all, rows...)
		testutil.MustExec(t, conn, "FLUSH", fmt.Sprintf("SAVEPOINT p%d", k))
		want[k] = map[string][]string{"totals": goAnswer("totals", all), "per_g": goAnswer("per_g", all)}
	}

	var (
		stop   atomic.Bool
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   = map[string]int{} // distinct failures, counted
		order  []string
		reads  atomic.Int64
		cycles atomic.Int64 // savepoints the churner took and released
		report = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			msg := fmt.Sprintf(format, args...)
			if errs[msg] == 0 {
				order = append(order, msg)
			}
			errs[msg]++
		}
	)
	for c := 0; c < 4; c++ {
		cc := srv.Conn(t)
		r := rand.New(rand.NewPCG(rng.Uint64(), uint64(c)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				k := r.IntN(points)
				view := []string{"totals", "per_g"}[r.IntN(2)]
				if churn && r.IntN(2) == 0 {
					got, err := rowsTimeout(cc, "SELECT * FROM per_g AS OF SAVEPOINT churn")
					reads.Add(1)
					if code := pgCode(err); code != "" && code != "3B001" {
						report("AS OF churn: [%s] %v", code, err)
						if code == "conn" {
							return
						}
					} else if err == nil && !slices.Equal(want[points-1]["per_g"], got) {
						report("AS OF churn: %s", diffRows(want[points-1]["per_g"], got))
					}
					continue
				}
				got, err := rowsTimeout(cc, fmt.Sprintf("SELECT * FROM %s AS OF SAVEPOINT p%d", view, k))
				reads.Add(1)
				if err != nil {
					report("AS OF p%d: [%s] %v", k, pgCode(err), err)
					if pgCode(err) == "conn" {
						return
					}
					continue
				}
				if !slices.Equal(want[k][view], got) {
					report("%s AS OF p%d: %s", view, k, diffRows(want[k][view], got))
				}
			}
		}()
	}
	churner := srv.Conn(t)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; churn && !stop.Load(); i++ {
			if err := testutil.ExecSimple(churner, time.Minute, "SAVEPOINT churn"); err != nil {
				report("SAVEPOINT churn: [%s] %v", pgCode(err), err)
				return
			}
			for j := 0; j < 3; j++ {
				if _, err := rowsErr(churner, "SELECT * FROM per_g AS OF SAVEPOINT churn"); err != nil {
					report("AS OF SAVEPOINT churn: [%s] %v", pgCode(err), err)
				}
			}
			if err := testutil.ExecSimple(churner, time.Minute, "RELEASE SAVEPOINT churn"); err != nil {
				report("RELEASE SAVEPOINT churn: [%s] %v", pgCode(err), err)
				return
			}
			if _, err := rowsErr(churner, "SELECT * FROM per_g AS OF SAVEPOINT churn"); pgCode(err) != "3B001" {
				report("AS OF a released savepoint: want 3B001, got %v", err)
			}
			cycles.Add(1)
		}
	}()
	// The clients race until they have done enough: a number of reads
	// (and, with churn, of savepoints taken and released under them),
	// not a length of time, so a slow machine tests as much as a fast one.
	testutil.Poll(t, 5*time.Minute, "the concurrent AS OF workload", func() error {
		mu.Lock()
		failed := len(order) > 0
		mu.Unlock()
		if failed || !srv.Running() {
			return nil // stop early: the failures are reported below
		}
		if n, c := reads.Load(), cycles.Load(); n < 400 || (churn && c < 10) {
			return fmt.Errorf("%d AS OF reads, %d savepoint cycles so far", n, c)
		}
		return nil
	})
	stop.Store(true)
	wg.Wait()
	t.Logf("%d AS OF reads", reads.Load())
	if len(order) > 0 {
		logPanics(t, srv)
	}
	for _, e := range order {
		t.Errorf("%dx %s", errs[e], e)
	}
	if !srv.Running() {
		t.Fatalf("the server died")
	}
	if got := mustRows(t, conn, "SELECT n FROM totals"); !slices.Equal([]string{fmt.Sprint(len(all))}, got) {
		t.Errorf("live totals at the end: %q", got)
	}
}

// rowsTimeout is rowsErr with a 10s limit: a stuck server fails the read
// instead of the whole test's time.
func rowsTimeout(conn *pgx.Conn, sql string) ([]string, error) {
	_, rows, err := queryText(conn, 10*time.Second, sql)
	return sorted(rows), err
}

// TestRollbackWhileAsOfEvicts: ROLLBACK TO SAVEPOINT p0 (paused, then
// RESUME) again and again while other clients read AS OF six savepoints,
// so the server's cache of open points evicts and reopens them all the
// time. Rollbacks must succeed; afterwards the views must run and SELECT
// must answer.
func TestRollbackWhileAsOfEvicts(t *testing.T) {
	rng := seedFor(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, streamDDL("ev", "ev.evict"),
		"CREATE MATERIALIZED VIEW totals AS "+viewQueries()["totals"])
	var all []row
	for k := 0; k < 6; k++ {
		rows := genRows(rng, int64(len(all)+1), 50)
		insert(t, conn, "ev", rows)
		all = append(all, rows...)
		testutil.MustExec(t, conn, "FLUSH", fmt.Sprintf("SAVEPOINT p%d", k))
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for c := 0; c < 3; c++ {
		cc := srv.Conn(t)
		r := rand.New(rand.NewPCG(rng.Uint64(), uint64(c)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := rowsTimeout(cc, fmt.Sprintf("SELECT * FROM totals AS OF SAVEPOINT p%d", 1+r.IntN(5))); pgCode(err) == "conn" {
					return // TestAsOfManyPointsConcurrently reports these
				}
			}
		}()
	}
	deadline := time.Now().Add(4 * time.Second)
	n, failed := 0, 0
	for time.Now().Before(deadline) && failed < 3 {
		err := testutil.ExecSimple(conn, 10*time.Second, "ALTER SYSTEM PAUSE")
		if err == nil {
			err = testutil.ExecSimple(conn, 10*time.Second, "ROLLBACK TO SAVEPOINT p0")
		}
		if err != nil {
			failed++
			t.Errorf("rollback %d: [%s] %v", n, pgCode(err), err)
			if pgCode(err) == "conn" {
				conn = srv.Conn(t)
			}
		}
		if err := testutil.ExecSimple(conn, 10*time.Second, "ALTER SYSTEM RESUME"); err != nil {
			t.Errorf("RESUME: %v", err)
		}
		n++
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d rollbacks", n)
	check := srv.Conn(t)
	if err := testutil.ExecSimple(check, 15*time.Second, "FLUSH"); err != nil {
		t.Errorf("FLUSH after the rollbacks: [%s] %v", pgCode(err), err)
	}
	if got, err := rowsTimeout(check, "SELECT n FROM totals"); err != nil || !slices.Equal([]string{fmt.Sprint(len(all))}, got) {
		t.Errorf("SELECT after the rollbacks: %q, [%s] %v; want %d", got, pgCode(err), err, len(all))
	}
	if got, err := rowsTimeout(check, "SHOW MATERIALIZED VIEWS"); err != nil || len(got) != 1 || !strings.Contains(got[0], "|running|") {
		t.Errorf("views after the rollbacks: %q, %v", got, err)
	}
	if t.Failed() {
		logPanics(t, srv)
	}
}
