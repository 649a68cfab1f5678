package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// The views of the fault rounds: an aggregate of the table, a join of
// the stream with the table, a top-N of the table; a sink publishes the
// aggregate's changes.
const (
	faultAgg  = "SELECT g, count(*) AS n, sum(v) AS s FROM acct GROUP BY g"
	faultJoin = "SELECT a.g, count(*) AS n, sum(e.v) AS s FROM ev e JOIN acct a ON e.k = a.k GROUP BY a.g"
	faultTop  = "SELECT k, v FROM acct ORDER BY v DESC, k LIMIT 5"
	faultSink = "fault.agg"
)

// TestClusterFaultRounds: three NATS nodes and three servers of one
// --cluster, under a writer that writes through a random server. Each
// round (choices from the seed, STREAMDB_FAULT_SEED) picks the
// coordinator or a member and kills it with -9 or pauses it (SIGSTOP)
// past the lease TTL; the cluster must take writes again without it;
// then the killed server is restarted or the paused one resumed. After
// each round, with the writer held, every server serves: the table holds
// every acknowledged row, the stream every acknowledged event, every view
// equals the same query computed here over the table's rows and the
// stream's messages, and the sink's consumer rebuilds the aggregate with
// no message id twice. STREAMDB_FAULT_ROUNDS sets the rounds (3 by
// default; `make cluster-faults` runs 10).
func TestClusterFaultRounds(t *testing.T) {
	began := time.Now()
	seed := testutil.Seed(t, "STREAMDB_FAULT_SEED")
	rng := rand.New(rand.NewPCG(seed, 9))
	rounds := 3
	if v := os.Getenv("STREAMDB_FAULT_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("STREAMDB_FAULT_ROUNDS=%q: want a positive number", v)
		}
		rounds = n
	}
	natsCluster := testutil.StartNATSCluster(t, 3)
	url := natsCluster.URL()
	_, js := testutil.JetStream(t, url)
	var servers []*testutil.Server
	for range 3 {
		servers = append(servers, testutil.StartClusterMember(t, url, "c1", memberArgs...))
	}
	conn, _ := testutil.ConnectCoordinator(t, 60*time.Second, servers...)
	testutil.MustExec(t, conn,
		"CREATE TABLE acct (k BIGINT PRIMARY KEY, g BIGINT, v BIGINT)",
		"CREATE STREAM ev (id BIGINT, k BIGINT, v BIGINT) WITH (subject = 'fault.ev')",
		"CREATE MATERIALIZED VIEW agg AS "+faultAgg,
		"CREATE MATERIALIZED VIEW joined AS "+faultJoin,
		"CREATE MATERIALIZED VIEW top AS "+faultTop,
		"CREATE SINK agg_out FROM agg INTO '"+faultSink+"'")
	conn.Close(context.Background())

	w := startFaultWriter(t, servers, seed)
	w.waitRows(t, 50, 60*time.Second, "the first writes")
	for round := 1; round <= rounds; round++ {
		roundBegan := time.Now()
		_, coord := testutil.ConnectCoordinator(t, 60*time.Second, servers...)
		victim := coord
		if rng.IntN(2) == 0 {
			others := slices.DeleteFunc(slices.Clone(servers), func(s *testutil.Server) bool { return s == coord })
			victim = others[rng.IntN(len(others))]
		}
		role := "member"
		if victim == coord {
			role = "coordinator"
		}
		kill := rng.IntN(2) == 0
		survivors := slices.DeleteFunc(slices.Clone(servers), func(s *testutil.Server) bool { return s == victim })
		w.waitRows(t, 20+rng.IntN(200), 60*time.Second, "writes before the fault")
		w.resetGap()
		faulted := time.Now()
		if kill {
			t.Logf("round %d: kill -9 of the %s %s", round, role, victim.Addr)
			victim.Kill(t)
		} else {
			t.Logf("round %d: SIGSTOP of the %s %s past the lease TTL", round, role, victim.Addr)
			victim.Signal(t, syscall.SIGSTOP)
		}
		// Without the victim: a coordinator among the survivors (a new
		// one when the victim led), whose node list has dropped the
		// victim's expired entry, and writes acknowledged again.
		conn, coord2 := testutil.ConnectCoordinator(t, 60*time.Second, survivors...)
		testutil.Poll(t, 30*time.Second, "the victim's entry to expire", func() error {
			if n, ok := nodes(t, conn)[victim.Addr]; ok {
				return fmt.Errorf("%s still listed: %+v", victim.Addr, n)
			}
			return nil
		})
		w.waitRows(t, 20, 90*time.Second, "writes acknowledged without the victim")
		served := time.Since(faulted)
		if kill {
			victim.Restart(t)
		} else {
			resumedBefore := strings.Count(victim.Logs(), "cluster member: forwarding sessions")
			victim.Signal(t, syscall.SIGCONT)
			if victim == coord {
				// It finds its lease lost and restarts itself as a member.
				testutil.Poll(t, 60*time.Second, "the resumed coordinator to forward sessions again", func() error {
					if n := strings.Count(victim.Logs(), "cluster member: forwarding sessions"); n <= resumedBefore {
						return fmt.Errorf("it started forwarding %d times", n)
					}
					return nil
				})
			}
		}
		testutil.Poll(t, 30*time.Second, "streamdb_nodes to list all three servers", func() error {
			if got := nodes(t, conn); len(got) != 3 {
				return fmt.Errorf("nodes %v", got)
			}
			return nil
		})
		conn.Close(context.Background())
		w.waitRows(t, 20, 60*time.Second, "writes after the victim is back")
		var stall time.Duration
		func() {
			w.pause()
			defer w.resume() // also when a check fails, so the writer can halt
			stall = w.resetGap()
			checkFaultRound(t, js, servers, w, round)
			w.resetGap()
		}()
		t.Logf("round %d: coordinator %s after it; writes stalled at most %s; 20 writes taken %s after the fault; round took %s",
			round, coord2.Addr, stall.Round(time.Millisecond), served.Round(time.Millisecond), time.Since(roundBegan).Round(time.Millisecond))
	}
	w.halt()
	if err := w.failed(); err != nil {
		t.Fatalf("writer: %v", err)
	}
	acct, events, unknown, resent, ambiguous := w.snapshot()
	t.Logf("%d rounds; %d table rows and %d events acknowledged, %d events unknown; %d statements sent again, %d after an ambiguous failure; test took %s",
		rounds, len(acct), len(events), len(unknown), resent, ambiguous, time.Since(began).Round(time.Millisecond))
}

// checkFaultRound checks, through every server, with the writer held,
// that the table and the stream hold what was acknowledged and that the
// views and the sink equal their queries over what they hold.
func checkFaultRound(t *testing.T, js jetstream.JetStream, servers []*testutil.Server, w *faultWriter, round int) {
	t.Helper()
	acct, events, unknown, _, _ := w.snapshot()
	stream := streamEvents(t, js, events, unknown, round)
	wantAgg, wantJoin, wantTop := faultAnswers(acct, stream)
	var wantTable []string
	for k, r := range acct {
		wantTable = append(wantTable, fmt.Sprintf("%d|%d|%d", k, r[0], r[1]))
	}
	sort.Strings(wantTable)
	for _, s := range servers {
		c := sessionVia(t, s, 60*time.Second)
		// Reads see acknowledged writes at once: the table is not polled.
		if got := testutil.SortedRows(t, c, "SELECT k, g, v FROM acct"); !slices.Equal(got, wantTable) {
			t.Fatalf("round %d: table acct through %s has %d rows, want the %d acknowledged: %s", round, s.Addr, len(got), len(wantTable), firstDiff(got, wantTable))
		}
		for _, v := range []struct {
			name, query string
			want        []string
		}{
			{"agg", "SELECT g, n, s FROM agg", wantAgg},
			{"joined", "SELECT g, n, s FROM joined", wantJoin},
			{"top", "SELECT k, v FROM top", wantTop},
		} {
			testutil.Poll(t, 60*time.Second, fmt.Sprintf("round %d: view %s through %s to equal its query", round, v.name, s.Addr), func() error {
				if got := testutil.SortedRows(t, c, v.query); !slices.Equal(got, v.want) {
					return fmt.Errorf("%d rows, want %d: %s", len(got), len(v.want), firstDiff(got, v.want))
				}
				return nil
			})
		}
		c.Close(context.Background())
	}
	testutil.Poll(t, 60*time.Second, fmt.Sprintf("round %d: the consumer of sink %s to rebuild agg", round, faultSink), func() error {
		f, err := testutil.ReadSink(js, faultSink, "changelog", []string{"g", "n", "s"})
		if err != nil {
			return err
		}
		if id := f.DuplicateID(); id != "" {
			t.Fatalf("round %d: sink %s holds message id %s twice", round, faultSink, id)
		}
		if got := f.Sorted(); !slices.Equal(got, wantAgg) {
			return fmt.Errorf("%d messages rebuild %d rows, want %d: %s", len(f.Msgs), len(got), len(wantAgg), firstDiff(got, wantAgg))
		}
		return nil
	})
}

// streamEvents reads the stream's messages: every acknowledged event is
// there once, an unknown one at most once, and nothing else. It returns
// them by id as k, v.
func streamEvents(t *testing.T, js jetstream.JetStream, acked, unknown map[int64][2]int64, round int) map[int64][2]int64 {
	t.Helper()
	msgs, err := testutil.SubjectMessages(js, "fault.ev")
	if err != nil {
		t.Fatalf("round %d: reading stream ev: %v", round, err)
	}
	got := map[int64][2]int64{}
	for _, m := range msgs {
		var e struct{ ID, K, V int64 }
		dec := json.NewDecoder(bytes.NewReader(m))
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("round %d: stream ev message %s: %v", round, m, err)
		}
		if _, dup := got[e.ID]; dup {
			t.Fatalf("round %d: stream ev holds event %d twice", round, e.ID)
		}
		want, ok := acked[e.ID]
		if !ok {
			want, ok = unknown[e.ID]
		}
		if !ok || want != [2]int64{e.K, e.V} {
			t.Fatalf("round %d: stream ev holds %s, which was not written", round, m)
		}
		got[e.ID] = [2]int64{e.K, e.V}
	}
	for id, e := range acked {
		if _, ok := got[id]; !ok {
			t.Fatalf("round %d: acknowledged event %d (k %d, v %d) is not in stream ev", round, id, e[0], e[1])
		}
	}
	return got
}

// faultAnswers computes the views' queries over the table's rows and the
// stream's events, as SortedRows gives rows.
func faultAnswers(acct, events map[int64][2]int64) (agg, join, top []string) {
	type nsum struct{ n, s int64 }
	byG := map[int64]nsum{}
	for _, r := range acct {
		a := byG[r[0]]
		byG[r[0]] = nsum{a.n + 1, a.s + r[1]}
	}
	joinG := map[int64]nsum{}
	for _, e := range events {
		if r, ok := acct[e[0]]; ok {
			a := joinG[r[0]]
			joinG[r[0]] = nsum{a.n + 1, a.s + e[1]}
		}
	}
	for g, a := range byG {
		agg = append(agg, fmt.Sprintf("%d|%d|%d", g, a.n, a.s))
	}
	for g, a := range joinG {
		join = append(join, fmt.Sprintf("%d|%d|%d", g, a.n, a.s))
	}
	keys := make([]int64, 0, len(acct))
	for k := range acct {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := acct[keys[i]][1], acct[keys[j]][1]
		return a > b || a == b && keys[i] < keys[j]
	})
	for _, k := range keys[:min(5, len(keys))] {
		top = append(top, fmt.Sprintf("%d|%d", k, acct[k][1]))
	}
	sort.Strings(agg)
	sort.Strings(join)
	sort.Strings(top)
	return agg, join, top
}

// firstDiff names the first row one sorted list has and the other lacks.
func firstDiff(got, want []string) string {
	for _, r := range want {
		if _, found := slices.BinarySearch(got, r); !found {
			return "missing " + r
		}
	}
	for _, r := range got {
		if _, found := slices.BinarySearch(want, r); !found {
			return "extra " + r
		}
	}
	return "same rows, different multiplicities"
}

// sessionVia opens a session through server s, polling while it refuses
// with 57P03 (restarting, or taking over).
func sessionVia(t *testing.T, s *testutil.Server, timeout time.Duration) *pgx.Conn {
	t.Helper()
	var conn *pgx.Conn
	testutil.Poll(t, timeout, "a session through "+s.Addr, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, s.DSN())
		if err == nil {
			if _, err = c.Exec(ctx, "SELECT 1"); err != nil {
				c.Close(ctx)
			}
		}
		if err != nil {
			return err
		}
		conn = c
		return nil
	})
	return conn
}
