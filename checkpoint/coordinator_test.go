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

	"streamdb/exec"
	"streamdb/storage"
)

// TestCoordinatorDataDriven runs scripted scenarios against a coordinator
// in this process, over a real Pebble store and a runtime with no views,
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
	dir   string
	store *storage.Store
	rt    *exec.Runtime
	c     *Coordinator

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
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt := exec.NewRuntime(store, nil, log, 2*time.Millisecond)
	rt.Start()
	h := &coordHarness{dir: dir, store: store, rt: rt, release: make(chan struct{})}
	h.settings = Settings{
		Timeout: 10 * time.Second, MaxConcurrent: 1, NumRetained: 1, Incremental: true, Async: true,
		Backend: "pebble", Dir: filepath.Join(dir, "checkpoints"), SavepointsDir: filepath.Join(dir, "savepoints"),
		DataDir: dir,
	}
	h.open(t)
	t.Cleanup(func() {
		close(h.release)
		h.c.Stop()
		rt.Close()
		store.Close()
	})
	return h
}

func (h *coordHarness) open(t *testing.T) {
	c, err := NewCoordinator(func() Settings {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.settings
	}, h.store, h.rt, slog.New(slog.NewTextHandler(io.Discard, nil)))
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
