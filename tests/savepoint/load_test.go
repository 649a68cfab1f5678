package savepoint

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestRollbackUnderLoad: writers INSERT and readers SELECT in loops while
// ROLLBACK TO SAVEPOINT runs again and again (sometimes between PAUSE and
// RESUME, sometimes with sources running), alongside SAVEPOINT/RELEASE of
// other savepoints. No client may get an error or lose its connection;
// every SELECT must see a whole state: the view's rows must equal its
// answer over some prefix of the stream in JetStream order (a view reads
// its input in sequence order and commits whole epochs). AS OF SAVEPOINT
// reads must always return the savepoint's state, and FLUSH in a loop must
// never fail. After RESUME and FLUSH
// the views equal PostgreSQL's answer over everything in JetStream, and
// every acknowledged INSERT is there.
func TestRollbackUnderLoad(t *testing.T) {
	rng := seedFor(t)
	ref := newReference(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)

	queries := subset(viewQueries(), "totals", "per_g")
	testutil.MustExec(t, conn, streamDDL("ev", "ev.load"))
	for _, n := range keys(queries) {
		testutil.MustExec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, queries[n]))
	}
	b1 := genRows(rng, 1, 100+rng.IntN(100))
	insert(t, conn, "ev", b1)
	testutil.MustExec(t, conn, "FLUSH", "SAVEPOINT sp")
	spState := viewRows(t, conn, keys(queries), " AS OF SAVEPOINT sp")
	compareViews(t, "AS OF SAVEPOINT sp vs PostgreSQL", ref.answer("ev", b1, queries), spState)

	const writers, readers = 3, 3
	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		mu       sync.Mutex
		errs     []string
		obs      []observation
		inserted atomic.Int64
		selects  atomic.Int64
	)
	fail := func(who string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) < 50 {
			errs = append(errs, fmt.Sprintf("%s: [%s] %v", who, pgCode(err), err))
		}
	}
	conns := make([]*pgx.Conn, writers+readers)
	for i := range conns {
		conns[i] = srv.Conn(t)
	}
	// A failure of the controller ends the test while the clients run:
	// they stop before their connections close (cleanups run last
	// registered first).
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
	for w := 0; w < writers; w++ {
		wr := rand.New(rand.NewPCG(rng.Uint64(), uint64(w)))
		c := conns[w]
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := int64(1_000_000 * (w + 1))
			for !stop.Load() {
				rows := genRows(wr, next, 1+wr.IntN(4))
				next += int64(len(rows))
				if err := testutil.ExecSimple(c, 30*time.Second, insertSQL("ev", rows)); err != nil {
					fail(fmt.Sprintf("writer %d INSERT", w), err)
					if pgCode(err) == "conn" {
						return
					}
					continue
				}
				inserted.Add(int64(len(rows)))
			}
		}()
	}
	for r := 0; r < readers; r++ {
		c := conns[writers+r]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				var view, sql string
				switch (r + i) % 3 {
				case 0:
					view, sql = "totals", "SELECT * FROM totals"
				case 1:
					view, sql = "per_g", "SELECT * FROM per_g"
				default:
					view = []string{"totals", "per_g"}[i%2]
					sql = "SELECT * FROM " + view + " AS OF SAVEPOINT sp"
				}
				rows, err := rowsErr(c, sql)
				selects.Add(1)
				if err != nil {
					fail(fmt.Sprintf("reader %d %s", r, sql), err)
					if pgCode(err) == "conn" {
						return
					}
					continue
				}
				if strings.Contains(sql, "AS OF") {
					if !slices.Equal(spState[view], rows) {
						fail(fmt.Sprintf("reader %d %s", r, sql), fmt.Errorf("not the savepoint's state: %s", diffRows(spState[view], rows)))
					}
					continue
				}
				mu.Lock()
				obs = append(obs, observation{view: view, rows: rows, at: time.Now()})
				mu.Unlock()
			}
		}()
	}

	// A client running FLUSH in a loop: it must never fail.
	flusher := srv.Conn(t)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if err := testutil.ExecSimple(flusher, time.Minute, "FLUSH"); err != nil {
				fail("FLUSH", err)
				if pgCode(err) == "conn" {
					return
				}
			}
			time.Sleep(20 * time.Millisecond) // paces the FLUSH load
		}
	}()

	// The controller: rollbacks, paused or not, and savepoint churn.
	start := time.Now()
	rollbacks, paused := 0, 0
	var slowest time.Duration
	rollback := func() {
		t0 := time.Now()
		testutil.MustExec(t, conn, "ROLLBACK TO SAVEPOINT sp")
		slowest = max(slowest, time.Since(t0))
	}
	for time.Since(start) < 6*time.Second && !t.Failed() {
		time.Sleep(time.Duration(20+rng.IntN(150)) * time.Millisecond) // lets the load run a moment the seed chooses
		if rng.IntN(2) == 0 {
			testutil.MustExec(t, conn, "ALTER SYSTEM PAUSE")
			rollback()
			compareViews(t, fmt.Sprintf("paused, right after rollback %d", rollbacks), spState, viewRows(t, conn, keys(queries), ""))
			testutil.MustExec(t, conn, "ALTER SYSTEM RESUME")
			paused++
		} else {
			rollback()
		}
		rollbacks++
		if rollbacks%3 == 0 {
			name := fmt.Sprintf("tmp_%d", rollbacks)
			testutil.MustExec(t, conn, "SAVEPOINT "+name, "RELEASE SAVEPOINT "+name)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d rollbacks (%d paused, slowest %v), %d rows inserted, %d SELECTs, %d observations", rollbacks, paused, slowest, inserted.Load(), selects.Load(), len(obs))
	for _, e := range errs {
		t.Errorf("client error: %s", e)
	}

	testutil.MustExec(t, conn, "ALTER SYSTEM RESUME", "FLUSH")
	_, js := testutil.JetStream(t, srv.NATSURL())
	msgs := streamMessages(t, js, "ev.load")
	if want := int64(len(b1)) + inserted.Load(); int64(len(msgs)) != want {
		t.Errorf("JetStream holds %d messages, want %d (acknowledged INSERTs)", len(msgs), want)
	}
	compareViews(t, "after RESUME and FLUSH vs PostgreSQL over all input", ref.answer("ev", msgs, queries), viewRows(t, conn, keys(queries), ""))
	if got := savepointNames(t, conn); !slices.Equal([]string{"sp"}, got) {
		t.Errorf("SHOW SAVEPOINTS at the end: %q", got)
	}

	// Every SELECT saw a whole prefix of the input.
	px := newPrefixes(msgs)
	bad := 0
	for _, o := range obs {
		if err := px.check(o); err != nil {
			bad++
			if bad <= 10 {
				t.Errorf("SELECT at %s saw a state that is not any prefix of the input: %v\nrows %q", o.at.Format("15:04:05.000"), err, clip(o.rows))
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d inconsistent observations in all", bad)
	}
}

type observation struct {
	view string
	rows []string
	at   time.Time
}

// prefixes holds, for each prefix length P of the input, what totals and
// per_g must show after exactly P messages.
type prefixes struct {
	sum, lo, hi []int64
	gN, gS      map[string][]int64
}

func newPrefixes(msgs []row) *prefixes {
	p := &prefixes{gN: map[string][]int64{}, gS: map[string][]int64{}}
	groups := map[string]bool{}
	for _, m := range msgs {
		groups[m.G] = true
	}
	for g := range groups {
		p.gN[g] = make([]int64, len(msgs)+1)
		p.gS[g] = make([]int64, len(msgs)+1)
	}
	p.sum = make([]int64, len(msgs)+1)
	p.lo = make([]int64, len(msgs)+1)
	p.hi = make([]int64, len(msgs)+1)
	for i, m := range msgs {
		p.sum[i+1] = p.sum[i] + m.X
		p.lo[i+1], p.hi[i+1] = m.X, m.X
		if i > 0 {
			p.lo[i+1], p.hi[i+1] = min(p.lo[i], m.X), max(p.hi[i], m.X)
		}
		for g := range groups {
			p.gN[g][i+1], p.gS[g][i+1] = p.gN[g][i], p.gS[g][i]
		}
		p.gN[m.G][i+1]++
		p.gS[m.G][i+1] += m.X
	}
	return p
}

func (p *prefixes) check(o observation) error {
	n := len(p.sum) - 1
	num := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
	switch o.view {
	case "totals":
		if len(o.rows) != 1 {
			return fmt.Errorf("%d rows", len(o.rows))
		}
		f := strings.Split(o.rows[0], "|")
		P := num(f[0])
		if P < 1 || P > int64(n) {
			return fmt.Errorf("count %d outside 1..%d", P, n)
		}
		want := fmt.Sprintf("%d|%d|%d|%d", P, p.sum[P], p.lo[P], p.hi[P])
		if o.rows[0] != want {
			return fmt.Errorf("want %s for the first %d messages", want, P)
		}
	case "per_g":
		var P int64
		for _, r := range o.rows {
			P += num(strings.Split(r, "|")[1])
		}
		if P < 1 || P > int64(n) {
			return fmt.Errorf("total count %d outside 1..%d", P, n)
		}
		var want []string
		for g := range p.gN {
			if p.gN[g][P] > 0 {
				want = append(want, fmt.Sprintf("%s|%d|%d", g, p.gN[g][P], p.gS[g][P]))
			}
		}
		sort.Strings(want)
		if !slices.Equal(want, o.rows) {
			return fmt.Errorf("want %q for the first %d messages", want, P)
		}
	}
	return nil
}
