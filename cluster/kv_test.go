package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// Two writers read version 1; the first to store wins, the other's
// store fails as stale and Update, reading again, builds on the winner.
func TestPlacementCompareAndSet(t *testing.T) {
	url := testutil.StartNATS(t)
	_, js := testutil.JetStream(t, url)
	ctx := context.Background()
	a, err := OpenPlacement(ctx, js, "c1", 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenPlacement(ctx, js, "c1", 1)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := a.Load(ctx)
	if err != nil || empty.Version != 0 || len(empty.Groups) != 0 {
		t.Fatalf("Load of a new bucket = %+v, %v; want version 0, no groups", empty, err)
	}
	v1, err := a.Store(ctx, empty, "n1", map[uint32]Assignment{1: {Node: "n1", Views: []string{"v"}}})
	if err != nil || v1.Version != 1 {
		t.Fatalf("first Store = %+v, %v; want version 1", v1, err)
	}
	if _, err := b.Store(ctx, empty, "n2", map[uint32]Assignment{1: {Node: "n2"}}); !errors.Is(err, ErrStale) {
		t.Fatalf("Store from the empty map after version 1 = %v, want ErrStale", err)
	}
	seenA, _ := a.Load(ctx)
	seenB, _ := b.Load(ctx)
	if _, err := a.Store(ctx, seenA, "n1", map[uint32]Assignment{1: {Node: "n1"}, 2: {Node: "n1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store(ctx, seenB, "n2", map[uint32]Assignment{1: {Node: "n2"}}); !errors.Is(err, ErrStale) {
		t.Fatalf("stale writer's Store = %v, want ErrStale", err)
	}
	got, err := b.Update(ctx, "n2", func(cur Placement) map[uint32]Assignment {
		next := map[uint32]Assignment{}
		for id, as := range cur.Groups {
			next[id] = as
		}
		next[3] = Assignment{Node: "n2"}
		return next
	})
	if err != nil || got.Version != 3 || len(got.Groups) != 3 || got.Writer != "n2" {
		t.Fatalf("Update = %+v, %v; want version 3 with groups 1, 2 and 3", got, err)
	}
	// An Update that changes nothing writes nothing.
	same, err := a.Update(ctx, "n1", func(cur Placement) map[uint32]Assignment { return cur.Groups })
	if err != nil || same.Version != 3 {
		t.Fatalf("Update without change = %+v, %v; want version 3 kept", same, err)
	}
}

// logBuffer collects a member's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func join(t *testing.T, url, node string) *Membership {
	t.Helper()
	return joinLogged(t, url, node, io.Discard)
}

func joinLogged(t *testing.T, url, node string, log io.Writer) *Membership {
	t.Helper()
	_, js := testutil.JetStream(t, url)
	m, err := Join(context.Background(), js, MemberOptions{Cluster: "c1", Node: node, Addr: node, Holder: node + "-" + fmt.Sprint(time.Now().UnixNano()),
		TTL: 1500 * time.Millisecond, Heartbeat: 250 * time.Millisecond, Log: slog.New(slog.NewTextHandler(log, nil)),
		Load: func() Load { return Load{Views: []string{"v_" + node}, StateBytes: 42} }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Leave(context.Background()) })
	return m
}

func members(t *testing.T, m *Membership) map[string]Member {
	t.Helper()
	ms, err := m.Members(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Member{}
	for _, x := range ms {
		out[x.Node] = x
	}
	return out
}

// Members see each other with small heartbeat ages; a member that stops
// beating (its process frozen) turns stale, then its entry expires; a
// member that leaves is gone at once; a second process with a taken node
// name does not register while the first beats.
func TestMembership(t *testing.T) {
	url := testutil.StartNATS(t)
	a, b, c := join(t, url, "127.0.0.1:1"), join(t, url, "127.0.0.1:2"), join(t, url, "127.0.0.1:3")
	testutil.Poll(t, 10*time.Second, "three members with fresh heartbeats", func() error {
		ms := members(t, a)
		if len(ms) != 3 {
			return fmt.Errorf("members %v", ms)
		}
		for _, m := range ms {
			if !m.Known || m.HeartbeatAge > time.Second || m.State != StateJoining || m.StateBytes != 42 || len(m.Views) != 1 {
				return fmt.Errorf("member %+v", m)
			}
		}
		return nil
	})
	var dupLog logBuffer
	dup := joinLogged(t, url, "127.0.0.1:2", &dupLog)
	testutil.Poll(t, 10*time.Second, "the duplicate to find the name taken", func() error {
		if !strings.Contains(dupLog.String(), "registered by another process") {
			return fmt.Errorf("log: %s", dupLog.String())
		}
		return nil
	})
	if m := members(t, a)["127.0.0.1:2"]; m.Holder != b.o.Holder {
		t.Fatalf("a second process took the live entry of 127.0.0.1:2: %+v", m)
	}
	// b stops beating without deleting its entry, as a killed process.
	close(b.stop)
	<-b.done
	testutil.Poll(t, 10*time.Second, "b stale", func() error {
		if m, ok := members(t, a)["127.0.0.1:2"]; !ok || m.State != StateStale {
			return fmt.Errorf("b is %+v (present %v)", m, ok)
		}
		return nil
	})
	// Its entry expires at the TTL; then the duplicate registers.
	testutil.Poll(t, 10*time.Second, "b's entry to expire and the duplicate to register", func() error {
		m, ok := members(t, a)["127.0.0.1:2"]
		if !ok || m.Holder != dup.o.Holder || m.State == StateStale {
			return fmt.Errorf("entry of 127.0.0.1:2 is %+v", m)
		}
		return nil
	})
	if err := c.Leave(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := members(t, a)["127.0.0.1:3"]; ok {
		t.Fatalf("c is listed after Leave")
	}
}

// A member whose entry vanished under it (expired while the process was
// paused past the TTL) creates it again at its next heartbeat.
func TestMemberRegistersAgainAfterItsEntryWent(t *testing.T) {
	url := testutil.StartNATS(t)
	a := join(t, url, "127.0.0.1:1")
	testutil.Poll(t, 10*time.Second, "a registered", func() error {
		if _, ok := members(t, a)["127.0.0.1:1"]; !ok {
			return errors.New("not yet")
		}
		return nil
	})
	if err := a.kv.Purge(context.Background(), a.key); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Second, "a registered again", func() error {
		if m, ok := members(t, a)["127.0.0.1:1"]; !ok || m.Holder != a.o.Holder {
			return fmt.Errorf("entry %+v (present %v)", m, ok)
		}
		return nil
	})
}
