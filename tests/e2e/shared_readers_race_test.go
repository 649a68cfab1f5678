package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestSharedReaderViewsCreatedRacing creates many views over one stream in
// quick succession, from two sessions at once, while a third INSERTs rows
// and busy goroutines compete for the CPUs, then FLUSHes with a deadline
// and checks every view exactly; then it drops half of them while as many
// new ones are created and rows arrive, and checks again. Each new view
// reads with a private reader that merges into the stream's shared one
// (exec/shared_source_merge.go): a merge that loses a barrier or a
// handoff, or a barrier that waits for a message a commit's ceiling
// holds, shows as a CREATE or FLUSH that never returns, one that loses
// rows as a view that differs. Each round uses a stream of its own;
// E2E_SEED replays the rounds' sizes and timings and
// STREAMDB_STRESS_ROUNDS sets how many rounds run (default 3).
func TestSharedReaderViewsCreatedRacing(t *testing.T) {
	seed := testutil.Seed(t, "E2E_SEED")
	rng := rand.New(rand.NewSource(int64(seed)))
	rounds := 3
	if s := os.Getenv("STREAMDB_STRESS_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("STREAMDB_STRESS_ROUNDS=%q: want a positive number", s)
		}
		rounds = n
	}
	srv := testutil.StartServer(t, testutil.ServerOptions{NATSURL: testutil.StartNATS(t)})
	conns := [2]*pgx.Conn{srv.Conn(t), srv.Conn(t)}
	ins := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())

	stopHogs := cpuHogs(runtime.NumCPU())
	defer stopHogs()
	for round := 0; round < rounds; round++ {
		stream, subject := fmt.Sprintf("race%d", round), fmt.Sprintf("e2e.race%d", round)
		exec(t, conns[0], fmt.Sprintf("CREATE STREAM %s (k BIGINT, v BIGINT) WITH (subject = '%s')", stream, subject))
		// Some rounds start with a backlog, some with an empty stream
		// (every reader then merges at position 0); messages go on
		// arriving while the views are created.
		total := 200 + rng.Intn(3000)
		before := 0
		if rng.Intn(2) == 0 {
			before = rng.Intn(total)
		}
		publishMany(t, js, subject, before, func(i int) string { return raceEvent(i) })
		// The rest arrive through INSERT (each a commit the readers must
		// reach before a later barrier: a fence) from a third session.
		inserting := func(from, to int) <-chan struct{} {
			r := rand.New(rand.NewSource(rng.Int63()))
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := from; i < to; {
					n := min(1+r.Intn(60), to-i)
					var sb strings.Builder
					fmt.Fprintf(&sb, "INSERT INTO %s (k, v) VALUES ", stream)
					for j := 0; j < n; j++ {
						if j > 0 {
							sb.WriteString(", ")
						}
						fmt.Fprintf(&sb, "(%d, %d)", i+j, (i+j)*7+3)
					}
					ctx := testutil.Context(t, time.Minute)
					if _, err := ins.Exec(ctx, sb.String(), pgx.QueryExecModeSimpleProtocol); err != nil {
						t.Errorf("round %d (seed %d): INSERT: %v", round, seed, err)
						return
					}
					i += n
					time.Sleep(time.Duration(r.Intn(3000)) * time.Microsecond)
				}
			}()
			return done
		}
		// ddl runs each session's statements in order, the sessions at
		// once.
		ddl := func(stmts [2][]string) {
			var wg sync.WaitGroup
			for c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for _, sql := range stmts[c] {
						ctx := testutil.Context(t, 2*time.Minute)
						if _, err := conns[c].Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
							t.Errorf("round %d (seed %d): %s: %v", round, seed, sql, err)
							return
						}
					}
				}()
			}
			wg.Wait()
		}
		check := func(phase string, total int, names []string) {
			if t.Failed() {
				t.FailNow()
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_, err := conns[0].Exec(ctx, "FLUSH", pgx.QueryExecModeSimpleProtocol)
			cancel()
			if err != nil {
				t.Fatalf("round %d %s (seed %d, %d messages, %d before the views): FLUSH: %v", round, phase, seed, total, before, err)
			}
			for _, name := range names {
				wantRaceView(t, conns[0], name, total)
			}
			if t.Failed() {
				t.Fatalf("round %d %s (seed %d, %d messages, %d before the views) failed", round, phase, seed, total, before)
			}
		}

		// Ten views, created by two sessions at once.
		const views = 10
		var stmts [2][]string
		var names []string
		for m := 2; m < 2+views; m++ {
			name := fmt.Sprintf("race%d_v%d", round, m)
			stmts[m%2] = append(stmts[m%2], raceView(name, stream, m))
			names = append(names, name)
		}
		pub := inserting(before, total)
		ddl(stmts)
		<-pub
		check("after creating views", total, names)

		// Half of them dropped while as many new ones are created and
		// rows arrive: a dropped view may leave a shared reader that
		// feeds no pipeline for a new view to merge into.
		total2 := total + 100 + rng.Intn(1000)
		stmts = [2][]string{}
		var kept []string
		for i, name := range names {
			if i%2 == 0 {
				stmts[0] = append(stmts[0], "DROP MATERIALIZED VIEW "+name)
				m := 2 + i
				w := fmt.Sprintf("race%d_w%d", round, m)
				stmts[1] = append(stmts[1], raceView(w, stream, m))
				kept = append(kept, w)
			} else {
				kept = append(kept, name)
			}
		}
		pub = inserting(total, total2)
		ddl(stmts)
		<-pub
		check("after dropping and creating views", total2, kept)
		t.Logf("round %d: %d then %d messages, %d before the views: every view right", round, total, total2, before)
	}
}

// raceEvent is message i of a round: k = i, v = i*7+3.
func raceEvent(i int) string { return fmt.Sprintf(`{"k": %d, "v": %d}`, i, i*7+3) }

// raceView creates view name over stream: per k % m, the count and the
// sum of v.
func raceView(name, stream string, m int) string {
	return fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS SELECT k %% %d AS g, count(*) AS n, sum(v) AS s FROM %s GROUP BY k %% %d", name, m, stream, m)
}

// wantRaceView checks view name, made by raceView with the m its name
// ends with, against messages 0..n-1.
func wantRaceView(t *testing.T, conn *pgx.Conn, name string, n int) {
	t.Helper()
	m, err := strconv.Atoi(name[strings.LastIndexAny(name, "vw")+1:])
	if err != nil {
		t.Fatalf("view name %s: %v", name, err)
	}
	cnt := make([]int64, m)
	sum := make([]int64, m)
	for i := 0; i < n; i++ {
		cnt[i%m]++
		sum[i%m] += int64(i*7 + 3)
	}
	var want []string
	for g := 0; g < m; g++ {
		if cnt[g] > 0 {
			want = append(want, fmt.Sprintf("%d %d %d", g, cnt[g], sum[g]))
		}
	}
	got := textRows(t, conn, fmt.Sprintf("SELECT g, n, s FROM %s ORDER BY g", name))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s after %d messages:\n got %v\nwant %v", name, n, got, want)
	}
}

// cpuHogs starts n goroutines that spin until the returned func is called,
// so that the server's goroutines are scheduled late and unevenly.
func cpuHogs(n int) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := 0
			for !done.Load() {
				for i := 0; i < 1e5; i++ {
					x += i
				}
				runtime.Gosched()
			}
			_ = x
		}()
	}
	return func() {
		done.Store(true)
		wg.Wait()
	}
}
