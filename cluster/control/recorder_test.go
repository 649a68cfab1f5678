package control

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// fakeSource is a server whose epochs advance by one on every look, with
// two readers of source "s" (one a step behind) and a checkpoint every
// tenth epoch.
type fakeSource struct {
	mu    sync.Mutex
	epoch uint64
	ckpts []CompletedCheckpoint
}

func (f *fakeSource) CommittedCut() (uint64, []Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.epoch++
	if f.epoch%10 == 0 {
		f.ckpts = append(f.ckpts, CompletedCheckpoint{ID: f.epoch / 10, Epoch: f.epoch, Digest: fmt.Sprintf("%064x", f.epoch)})
	}
	return f.epoch, []Report{{"s": f.epoch * 10}, {"s": f.epoch*10 - 5, "t": f.epoch}}, nil
}

func (f *fakeSource) CheckpointsAfter(after uint64) ([]CompletedCheckpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []CompletedCheckpoint
	for _, c := range f.ckpts {
		if c.ID > after {
			out = append(out, c)
		}
	}
	return out, nil
}

// On a three-node NATS cluster with the control stream and the lease at
// R3, stopping the control stream's leader mid-run changes nothing: the
// recorder goes on appending with a quorum, and the log keeps every
// invariant.
func TestRecorderSurvivesNATSNodeLoss(t *testing.T) {
	nc := testutil.StartNATSCluster(t, 3)
	url := nc.URL()
	const cluster = "three"
	_, js := testutil.JetStream(t, url)
	rec, err := StartRecorder(js, &fakeSource{}, RecorderOptions{Cluster: cluster, Holder: "a", Replicas: 3,
		Interval: 10 * time.Millisecond, LeaseTTL: 3 * time.Second, LeaseRenew: 500 * time.Millisecond,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	committed := func(atLeast uint64) func() error {
		return func() error {
			c, ok, err := NewReader(js, cluster).Committed(testutil.Context(t, 5*time.Second))
			if err != nil || !ok || c.Epoch < atLeast {
				return fmt.Errorf("committed %d (%v, %v), want at least %d", c.Epoch, ok, err, atLeast)
			}
			return nil
		}
	}
	testutil.Poll(t, 60*time.Second, "20 committed epochs", committed(20))

	s, err := js.Stream(testutil.Context(t, 10*time.Second), StreamName(cluster))
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(testutil.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Replicas != 3 || info.Config.Storage.String() != "File" {
		t.Fatalf("control stream: %d replicas, %s storage; want 3, file", info.Config.Replicas, info.Config.Storage)
	}
	stopped := false
	for _, srv := range nc.Servers {
		if info.Cluster != nil && srv.Name() == info.Cluster.Leader {
			srv.Shutdown()
			stopped = true
		}
	}
	if !stopped {
		t.Fatalf("no server leads the control stream: %+v", info.Cluster)
	}
	_, js2 := testutil.JetStream(t, nc.URL()) // the two left
	c0, _, _ := NewReader(js2, cluster).Committed(testutil.Context(t, 30*time.Second))
	testutil.Poll(t, 60*time.Second, "20 more committed epochs after the leader stopped", func() error {
		c, ok, err := NewReader(js2, cluster).Committed(testutil.Context(t, 5*time.Second))
		if err != nil || !ok || c.Epoch < c0.Epoch+20 {
			return fmt.Errorf("committed %d (%v, %v), want at least %d", c.Epoch, ok, err, c0.Epoch+20)
		}
		return nil
	})
	rec.Close()
	recs, c := replay(t, js2, cluster)
	var ckpts, barriers int
	for _, r := range recs {
		switch r.Kind {
		case KindCheckpoint:
			ckpts++
		case KindBarrier:
			barriers++
			if r.Cuts["s"] != r.Epoch*10-5 || r.Cuts["t"] != r.Epoch {
				t.Fatalf("epoch %d cut %v; want the slower reader's s=%d, t=%d", r.Epoch, r.Cuts, r.Epoch*10-5, r.Epoch)
			}
		}
	}
	if ckpts == 0 || barriers < 40 {
		t.Fatalf("%d barriers and %d checkpoints recorded; want at least 40 and 1", barriers, ckpts)
	}
	t.Logf("%d records, committed epoch %d, leader %s stopped at epoch %d", len(recs), c.Committed().Epoch, info.Cluster.Leader, c0.Epoch)
}

// Two servers of one cluster: one records while the other waits for the
// lease; when the first shuts down (releasing the lease) the second takes
// over, records nothing until its own epochs pass the newest recorded
// one, then goes on after it.
func TestRecorderHandover(t *testing.T) {
	url := testutil.StartNATS(t)
	_, js := testutil.JetStream(t, url)
	const cluster = "handover"
	opts := func(holder string) RecorderOptions {
		return RecorderOptions{Cluster: cluster, Holder: holder, Interval: 5 * time.Millisecond,
			LeaseTTL: time.Second, LeaseRenew: 200 * time.Millisecond, Log: slog.New(slog.DiscardHandler)}
	}
	a, err := StartRecorder(js, &fakeSource{epoch: 100}, opts("a"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	committed := func() uint64 {
		c, _, _ := NewReader(js, cluster).Committed(testutil.Context(t, 5*time.Second))
		return c.Epoch
	}
	testutil.Poll(t, 30*time.Second, "a to record", func() error {
		if committed() < 110 {
			return fmt.Errorf("committed %d", committed())
		}
		return nil
	})
	b, err := StartRecorder(js, &fakeSource{}, opts("b"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a.Close()
	aRecs, _ := replay(t, js, cluster)
	var aToken, stoppedAt uint64
	for _, r := range aRecs {
		aToken = max(aToken, r.Token)
		if r.Kind == KindBarrier {
			stoppedAt = r.Epoch
		}
	}
	testutil.Poll(t, 30*time.Second, "b to take over past a's epochs", func() error {
		if committed() < stoppedAt+20 {
			return fmt.Errorf("committed %d, a stopped at %d", committed(), stoppedAt)
		}
		return nil
	})
	b.Close()
	recs, _ := replay(t, js, cluster) // the Checker: epochs increase, tokens too
	for _, r := range recs[len(aRecs):] {
		if r.Token <= aToken {
			t.Fatalf("record %d after the handover has token %d, not above a's %d", r.Seq, r.Token, aToken)
		}
	}
	if first := recs[len(aRecs)]; first.Kind != KindBarrier || first.Epoch != stoppedAt+1 {
		t.Fatalf("b's first record %+v; want the barrier of epoch %d", first, stoppedAt+1)
	}
}
