package checkpoint

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"streamdb/storage"
)

// TestCoordinatorDataDriven runs scripted scenarios against a coordinator
// in this process, over a real Pebble store and an epoch source with no views,
// the way Pebble tests its own checkpoints. Commands (testdata/coordinator):
//
//	set key=value ...     change a setting (interval, min-pause, timeout,
//	                      num-retained, tolerable, max-concurrent, async)
//	take [trigger=T] [hook=fail|hang]
//	                      take a checkpoint; hook=fail removes its directory
//	                      before the metadata is written, hook=hang blocks
//	                      there until the timeout aborts it
//	savepoint name=N      take a savepoint
//	history               every checkpoint: id, status, trigger, directory kept or gone
//	health                healthy/unhealthy and the consecutive failures
//	restart               a new coordinator over the same directories
//	due interval=.. min-pause=.. max-concurrent=.. last-start=.. last-end=.. inflight=.. now=..
//	                      periodicDue on a timeline given in offsets from 0
func TestCoordinatorDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/coordinator", func(t *testing.T, path string) {
		h := newCoordHarness(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return h.run(t, d)
		})
	})
}

type coordHarness struct {
	dir    string
	store  *storage.Store
	epochs *fakeEpochs
	c      *Coordinator

	mu       sync.Mutex
	settings Settings
	hookMode string        // "", "fail" or "hang": see hook
	release  chan struct{} // closes to let a hung checkpoint writer go
}

func newCoordHarness(t *testing.T) *coordHarness {
	dir := t.TempDir()
	store, err := storage.Open(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	h := &coordHarness{dir: dir, store: store, epochs: &fakeEpochs{}, release: make(chan struct{})}
	h.settings = Settings{
		Timeout: 10 * time.Second, MaxConcurrent: 1, NumRetained: 1, Incremental: true, Async: true,
		Backend: "pebble", Dir: filepath.Join(dir, "checkpoints"), SavepointsDir: filepath.Join(dir, "savepoints"),
		DataDir: dir,
	}
	h.open(t)
	t.Cleanup(func() {
		close(h.release)
		h.c.Stop()
		store.Close()
	})
	return h
}

// fakeEpochs is an EpochSource whose boundary is a lock that a
// checkpoint holds while the cut is taken; cut is what it reports (no
// views unless a test sets one).
type fakeEpochs struct {
	mu  sync.Mutex
	cut Cut
}

func (f *fakeEpochs) AtEpochBoundary(fn func(cut Cut) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fn(f.cut)
}

// TestCutReachesMeta: a synchronous checkpoint records the cut its
// EpochSource reports; an asynchronous one keeps the cut's names but reads
// the epoch and the sequences back from the checkpointed state, which here
// holds no positions.
func TestCutReachesMeta(t *testing.T) {
	cut := Cut{Epoch: 7, Positions: []ViewPosition{
		{ViewID: 3, View: "v", Source: 0, Stream: "s", Subject: "s.x", Seq: 42},
		{ViewID: 3, View: "v", Source: 1, Stream: "t", Subject: "t.x", Seq: 9},
	}}
	want := []Position{{View: "v", Source: 0, Stream: "s", Subject: "s.x", Seq: 42}, {View: "v", Source: 1, Stream: "t", Subject: "t.x", Seq: 9}}
	for _, async := range []bool{false, true} {
		h := newCoordHarness(t)
		h.epochs.cut = cut
		h.settings.Async = async
		h.settings.NumRetained = 5
		m, err := h.c.Take(context.Background(), TriggerManual)
		if err != nil {
			t.Fatal(err)
		}
		wantEpoch, wantPos := uint64(7), want
		if async {
			wantEpoch = 0
			wantPos = []Position{want[0], want[1]}
			wantPos[0].Seq, wantPos[1].Seq = 0, 0
		}
		if m.Epoch != wantEpoch || fmt.Sprint(m.Positions) != fmt.Sprint(wantPos) {
			t.Errorf("async=%t: checkpoint epoch %d positions %v, want epoch %d positions %v", async, m.Epoch, m.Positions, wantEpoch, wantPos)
		}
		kept, err := h.c.RetainedPositions()
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(kept) != fmt.Sprint(wantPos) {
			t.Errorf("async=%t: retained positions %v, want %v", async, kept, wantPos)
		}
	}
}

func (h *coordHarness) open(t *testing.T) {
	c, err := NewCoordinator(func() Settings {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.settings
	}, h.store, h.epochs, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	c.testHook = h.hook
	h.c = c
}

// hook is the coordinator's testHook: what the next checkpoint meets
// between its Pebble checkpoint and its metadata (set by take's hook=).
// A writer that a timeout abandoned may still call it later, so the mode
// is read under the harness's lock and a hang waits for the test's end.
func (h *coordHarness) hook(dir string) {
	h.mu.Lock()
	mode := h.hookMode
	h.hookMode = ""
	h.mu.Unlock()
	switch mode {
	case "fail":
		os.RemoveAll(dir)
	case "hang":
		<-h.release
	}
}

func (h *coordHarness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "set":
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, a := range d.CmdArgs {
			if err := setCoordSetting(&h.settings, a.Key, a.Vals[0]); err != nil {
				d.Fatalf(t, "%v", err)
			}
		}
		return "ok\n"
	case "take":
		trigger := TriggerManual
		hook := ""
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "trigger":
				trigger = a.Vals[0]
			case "hook":
				hook = a.Vals[0]
			}
		}
		h.mu.Lock()
		h.hookMode = hook
		h.mu.Unlock()
		m, err := h.c.Take(context.Background(), trigger)
		h.mu.Lock()
		h.hookMode = "" // unused if the checkpoint ended before its hook
		h.mu.Unlock()
		if err != nil {
			return fmt.Sprintf("id=%d status=%s error: %s\n", m.ID, m.Status, h.redact(err.Error()))
		}
		return fmt.Sprintf("id=%d status=%s\n", m.ID, m.Status)
	case "savepoint":
		var name string
		d.ScanArgs(t, "name", &name)
		m, err := h.c.TakeSavepoint(context.Background(), name)
		if err != nil {
			return "error: " + h.redact(err.Error()) + "\n"
		}
		return fmt.Sprintf("id=%d status=%s\n", m.ID, m.Status)
	case "history":
		var sb strings.Builder
		for _, m := range h.c.History() {
			kept := "gone"
			if _, err := os.Stat(m.Dir); err == nil {
				kept = "kept"
			}
			fmt.Fprintf(&sb, "%d %s %s dir=%s\n", m.ID, m.Status, m.Trigger, kept)
		}
		return sb.String()
	case "health":
		ok, failures := h.c.Healthy()
		state := "healthy"
		if !ok {
			state = "unhealthy"
		}
		return fmt.Sprintf("%s failures=%d\n", state, failures)
	case "restart":
		h.c.Stop()
		h.open(t)
		return "ok\n"
	case "due":
		var s Settings
		var lastStart, lastEnd, now time.Time
		inflight := 0
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, a := range d.CmdArgs {
			v := a.Vals[0]
			switch a.Key {
			case "last-start", "last-end", "now":
				off, err := time.ParseDuration(v)
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				at := map[string]*time.Time{"last-start": &lastStart, "last-end": &lastEnd, "now": &now}[a.Key]
				*at = base.Add(off)
			case "inflight":
				inflight, _ = strconv.Atoi(v)
			default:
				if err := setCoordSetting(&s, a.Key, v); err != nil {
					d.Fatalf(t, "%v", err)
				}
			}
		}
		return fmt.Sprintf("%t\n", periodicDue(s, now, lastStart, lastEnd, inflight))
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// redact replaces the harness's temporary directory in messages.
func (h *coordHarness) redact(s string) string { return strings.ReplaceAll(s, h.dir, "$DIR") }

func setCoordSetting(s *Settings, key, value string) error {
	dur := func(p *time.Duration) error {
		d, err := time.ParseDuration(value)
		*p = d
		return err
	}
	num := func(p *int) error {
		n, err := strconv.Atoi(value)
		*p = n
		return err
	}
	switch key {
	case "interval":
		return dur(&s.Interval)
	case "min-pause":
		return dur(&s.MinPause)
	case "timeout":
		return dur(&s.Timeout)
	case "num-retained":
		return num(&s.NumRetained)
	case "tolerable":
		return num(&s.TolerableFailures)
	case "max-concurrent":
		return num(&s.MaxConcurrent)
	case "async":
		b, err := strconv.ParseBool(value)
		s.Async = b
		return err
	}
	return fmt.Errorf("unknown setting %q", key)
}
