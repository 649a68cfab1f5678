package ha

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// load publishes events {"k": key, "v": value} to subject until stopped,
// in acknowledged batches, and keeps every event JetStream acknowledged.
type load struct {
	mu     sync.Mutex
	events [][]any // k, v
	err    error
	stop   chan struct{}
	done   chan struct{}
}

func startLoad(t *testing.T, js jetstream.JetStream, subject string, seed uint64) *load {
	l := &load{stop: make(chan struct{}), done: make(chan struct{})}
	rng := rand.New(rand.NewPCG(seed, 22))
	go func() {
		defer close(l.done)
		var seq int
		for {
			select {
			case <-l.stop:
				return
			case <-time.After(10 * time.Millisecond): // the load's pace, not a wait
			}
			type ev struct{ k, v int64 }
			batch := make([]ev, 100)
			for i := range batch {
				batch[i] = ev{rng.Int64N(50), rng.Int64N(1000) - 300}
			}
			// Each event has its own message id: a batch that failed (a
			// NATS node went away) is sent again until every event is
			// acknowledged, and JetStream drops the copies it already
			// holds.
			first := seq
			seq += len(batch)
			deadline := time.Now().Add(time.Minute)
			for {
				err := publishBatch(js, subject, first, len(batch), func(i int) []byte {
					return fmt.Appendf(nil, `{"k":%d,"v":%d}`, batch[i].k, batch[i].v)
				})
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					l.fail(err)
					return
				}
			}
			l.mu.Lock()
			for _, e := range batch {
				l.events = append(l.events, []any{e.k, e.v})
			}
			l.mu.Unlock()
		}
	}()
	t.Cleanup(l.halt)
	return l
}

// publishBatch publishes n messages with ids first..first+n-1 and waits
// for every acknowledgement.
func publishBatch(js jetstream.JetStream, subject string, first, n int, msg func(i int) []byte) error {
	futures := make([]jetstream.PubAckFuture, n)
	for i := range futures {
		var err error
		futures[i], err = js.PublishAsync(subject, msg(i), jetstream.WithMsgID(strconv.Itoa(first+i)))
		if err != nil {
			return err
		}
	}
	timeout := time.After(10 * time.Second)
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return err
		case <-timeout:
			return errors.New("no acknowledgement from JetStream in 10s")
		}
	}
	return nil
}

func (l *load) fail(err error) {
	l.mu.Lock()
	l.err = err
	l.mu.Unlock()
}

func (l *load) halt() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

func (l *load) published() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// The views of the group, and the same queries over PostgreSQL's table
// ev of every acknowledged event.
const (
	perKeyView = "SELECT k, count(*) AS n, sum(v) AS s FROM ev GROUP BY k"
	totalView  = "SELECT sum(n) AS n FROM per_key"
)

// expected loads every acknowledged event into PostgreSQL and returns what
// the views must hold there: per_key as key -> "count sum", and total.
func (l *load) expected(t *testing.T) (map[string]string, string) {
	l.mu.Lock()
	events := l.events
	l.mu.Unlock()
	pg := testutil.StartPostgres(t).Conn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := pg.Exec(ctx, "CREATE TABLE ev (k BIGINT, v BIGINT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.CopyFrom(ctx, pgx.Identifier{"ev"}, []string{"k", "v"}, pgx.CopyFromRows(events)); err != nil {
		t.Fatal(err)
	}
	want, err := viewRows(pg, perKeyView)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err := testutil.QueryText(pg, time.Minute, "SELECT sum(n) FROM ("+perKeyView+") per_key", "NULL")
	if err != nil {
		t.Fatal(err)
	}
	return want, rows[0][0]
}

// viewRows reads rows of k, n, s as key -> "count sum".
func viewRows(conn *pgx.Conn, query string) (map[string]string, error) {
	_, rows, err := testutil.QueryText(conn, 30*time.Second, query, "NULL")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r[0]] = r[1] + " " + r[2]
	}
	return out, nil
}

func diff(got, want map[string]string) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d keys, want %d", len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			return fmt.Errorf("key %s: count and sum %q, want %q", k, got[k], w)
		}
	}
	return nil
}

// Two servers of one group under a steady load published straight to
// JetStream: the active one is killed (kill -9) again and again, so the
// role alternates; each time the standby takes the lease, restores the
// group's newest checkpoint from the bucket and replays from its
// positions. After every third kill the active server is also paused
// (SIGSTOP) past its lease once, then resumed: it steps down to standby.
// At the end both views equal the same queries in PostgreSQL over every
// acknowledged event: nothing lost, nothing counted twice.
// $HA_KILLS sets the number of kills (default 10).
func TestTakeoverUnderLoadExactlyOnce(t *testing.T) {
	seed := testutil.Seed(t, "HA_SEED")
	kills := 10
	if v := os.Getenv("HA_KILLS"); v != "" {
		kills, _ = strconv.Atoi(v)
	}
	url := testutil.StartNATS(t)
	g := startGroup(t, url, seed)
	g.rounds(t, kills, nil)
	g.checkExact(t)
}

// On a three-node NATS cluster, with --ha-replicas 3: the JetStream
// streams the server creates (the input stream's, a table's changelog)
// and the lease, roles and checkpoint buckets have three replicas. The
// active server is killed or paused round after round as above, and one
// NATS node is shut down after the third round (the servers and the load
// reconnect to the others). At the end the views equal PostgreSQL's over
// every acknowledged event.
func TestTakeoverOnNATSCluster(t *testing.T) {
	seed := testutil.Seed(t, "HA_SEED")
	cluster := testutil.StartNATSCluster(t, 3)
	url := cluster.URL()
	_, js := testutil.JetStream(t, url)
	g := startGroup(t, url, seed, "--ha-replicas", "3")
	conn := connectGroup(t, 30*time.Second, g.servers...)
	testutil.MustExec(t, conn, "CREATE TABLE r3 (id BIGINT PRIMARY KEY)", "INSERT INTO r3 VALUES (1)")
	conn.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range []string{"streamdb_ev", "streamdb_r3", "KV_streamdb_ha_load", "KV_streamdb_ha_load_roles", "OBJ_streamdb_ha_load_checkpoints"} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatalf("JetStream stream %s: %v", name, err)
		}
		if r := s.CachedInfo().Config.Replicas; r != 3 {
			t.Fatalf("JetStream stream %s has %d replicas, want 3", name, r)
		}
	}
	g.rounds(t, 5, func(i int) {
		if i == 2 {
			n := cluster.Servers[2]
			t.Logf("shutting down NATS node %s", n.Name())
			n.Shutdown()
			n.WaitForShutdown()
		}
	})
	g.checkExact(t)
}

// group is two servers of one group under load.
type group struct {
	servers []*testutil.Server
	load    *load
	rng     *rand.Rand
}

func startGroup(t *testing.T, url string, seed uint64, extra ...string) *group {
	a := startMember(t, url, "load", extra...)
	b := startMember(t, url, "load", extra...)
	conn := connectGroup(t, 30*time.Second, a, b)
	testutil.MustExec(t, conn,
		"CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = 'ha.ev')",
		"CREATE MATERIALIZED VIEW per_key AS "+perKeyView,
		"CREATE MATERIALIZED VIEW total AS "+totalView)
	conn.Close(context.Background())
	_, js := testutil.JetStream(t, url)
	return &group{servers: []*testutil.Server{a, b}, load: startLoad(t, js, "ha.ev", seed), rng: rand.New(rand.NewPCG(seed, 7))}
}

// rounds kills the active server n times, and after every third kill
// pauses it past its lease once, so that the role alternates; after runs
// after each round.
func (g *group) rounds(t *testing.T, n int, after func(i int)) {
	a, b, l := g.servers[0], g.servers[1], g.load
	var takeovers []time.Duration
	kills, pauses := 0, 0
	for i := 0; kills < n; i++ {
		c := connectGroup(t, 60*time.Second, a, b)
		act := 1
		if activeAddr(c) == a.Addr {
			act = 0
		}
		c.Close(context.Background())
		// Let the active server run a little: a checkpoint or two, or none.
		before := l.published()
		want := before + 200 + g.rng.IntN(3000)
		testutil.Poll(t, 30*time.Second, "some load on the active server", func() error {
			if l.published() < want {
				return errors.New("not yet")
			}
			return nil
		})
		killed, other := g.servers[act], g.servers[1-act]
		pause := i%4 == 3
		if pause {
			// Stalled past its lease instead: it must commit nothing
			// more and step down once resumed.
			killed.Signal(t, syscall.SIGSTOP)
			pauses++
		} else {
			killed.Kill(t)
			kills++
		}
		start := time.Now()
		// The other one takes over; only then does the killed one come
		// back (as a standby), so the role alternates.
		c = connectGroup(t, 60*time.Second, other)
		takeovers = append(takeovers, time.Since(start))
		c.Close(context.Background())
		if pause {
			killed.Signal(t, syscall.SIGCONT)
			testutil.Poll(t, 30*time.Second, "the resumed server to step down", func() error {
				msg, err := refusal(killed)
				if err == nil && !strings.Contains(msg, other.Addr) {
					err = errors.New(msg)
				}
				return err
			})
		} else {
			killed.Restart(t)
		}
		if after != nil {
			after(i)
		}
		if l.err != nil {
			t.Fatalf("load: %v", l.err)
		}
	}
	t.Logf("%d kills (kill -9) and %d pauses (SIGSTOP), alternating servers; takeovers (kill or stop to a session on the other server): %v", kills, pauses, takeovers)
}

// checkExact stops the load and waits for the views to hold every
// acknowledged event once.
func (g *group) checkExact(t *testing.T) {
	l := g.load
	l.halt()
	if l.err != nil {
		t.Fatalf("load: %v", l.err)
	}
	t.Logf("%d events acknowledged", l.published())
	want, wantTotal := l.expected(t)
	if wantTotal != strconv.Itoa(l.published()) {
		t.Fatalf("PostgreSQL counts %s events, want %d", wantTotal, l.published())
	}
	conn := connectGroup(t, 60*time.Second, g.servers...)
	testutil.Poll(t, 60*time.Second, "view per_key to equal PostgreSQL's", func() error {
		got, err := viewRows(conn, "SELECT k, n, s FROM per_key")
		if err != nil {
			return err
		}
		return diff(got, want)
	})
	_, rows, err := testutil.QueryText(conn, 30*time.Second, "SELECT n FROM total", "NULL")
	if err != nil || len(rows) != 1 || rows[0][0] != wantTotal {
		t.Fatalf("view total: %v, %v; want PostgreSQL's %s", rows, err, wantTotal)
	}
}

// On a three-node NATS cluster, the node that leads JetStream's meta
// group is shut down while the standby takes over (a random moment from
// the kill to about a second past the lease's expiry): replies of
// requests in flight through it or answered by it are lost, and the
// takeover must send them again rather than wait out a long timeout (it
// hung until its start failed: the listing of the checkpoint bucket, the
// opening of the bucket). At the end the views equal PostgreSQL's.
func TestTakeoverWhileNATSNodeGoes(t *testing.T) {
	seed := testutil.Seed(t, "HA_SEED")
	cluster := testutil.StartNATSCluster(t, 3)
	g := startGroup(t, cluster.URL(), seed, "--ha-replicas", "3")
	c := connectGroup(t, 30*time.Second, g.servers...)
	act := 1
	if activeAddr(c) == g.servers[0].Addr {
		act = 0
	}
	c.Close(context.Background())
	// Some load, and a checkpoint or more in the bucket.
	want := g.load.published() + 2000 + g.rng.IntN(5000)
	testutil.Poll(t, 60*time.Second, "some load on the active server", func() error {
		if g.load.published() < want {
			return errors.New("not yet")
		}
		return nil
	})
	var leader *natsserver.Server
	for _, n := range cluster.Servers {
		if n.JetStreamIsLeader() {
			leader = n
		}
	}
	if leader == nil {
		t.Fatal("the NATS cluster has no meta leader")
	}
	killed, other := g.servers[act], g.servers[1-act]
	delay := time.Duration(g.rng.IntN(4000)) * time.Millisecond
	t.Logf("kill -9 of the active server, then %v later shutdown of NATS node %s (the meta leader)", delay, leader.Name())
	killed.Kill(t)
	start := time.Now()
	time.Sleep(delay) // the moment of the node's loss, drawn from the seed
	leader.Shutdown()
	c = connectGroup(t, 60*time.Second, other)
	t.Logf("takeover (kill to a session on the other server): %v", time.Since(start))
	c.Close(context.Background())
	killed.Restart(t)
	g.checkExact(t)
}
