package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// EnvLogDir names an environment variable that, when set, holds a
// directory where every server's whole log is copied when its test ends,
// passed or failed: loops hunting a rare failure keep the logs of the
// runs around it, and slow phases of passing runs show in them.
const EnvLogDir = "STREAMDB_TEST_LOG_DIR"

// keepLog copies the log of s into $STREAMDB_TEST_LOG_DIR, if set, as
// <test name>-<port>.log.
func keepLog(t testing.TB, s *Server) {
	dir := os.Getenv(EnvLogDir)
	if dir == "" {
		return
	}
	data, err := os.ReadFile(s.LogPath)
	if err != nil {
		t.Logf("testutil: keeping the log of %s: %v", s.Addr, err)
		return
	}
	name := fmt.Sprintf("%s-%d.log", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), s.Port)
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	if err != nil {
		t.Logf("testutil: keeping the log of %s: %v", s.Addr, err)
	}
}

// slowStart is how long a start may take before StartServer and Restart
// log it with the run's output: a start that is slow but in time is what
// a start that times out looks like on a luckier run.
const slowStart = 10 * time.Second

// goroutineDumpMarker begins the Go runtime's report of every goroutine,
// which it writes to stderr when SIGQUIT ends the process.
const goroutineDumpMarker = "SIGQUIT: quit"

// quitForStacks ends a process that hangs with SIGQUIT, so that the Go
// runtime writes every goroutine's stack to its log, and waits for it to
// go (killing it if the dump takes too long).
func quitForStacks(p *process) {
	_ = p.cmd.Process.Signal(syscall.SIGQUIT)
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // a stopped process must run to dump
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// runReport is the output of one run from byte offset start of the log
// at path: the last n lines it logged and, when SIGQUIT ended it, every
// goroutine's stack (the dump follows the log lines; it is never cut).
func runReport(path string, start int64, n int) string {
	out, err := readFrom(path, start)
	if err != nil {
		return err.Error()
	}
	logged, dump, quit := strings.Cut(out, goroutineDumpMarker)
	report := lastLines(logged, n)
	if quit {
		report += "\n--- goroutines (SIGQUIT) ---\n" + goroutineDumpMarker + dump
	}
	return report
}

// waitingLine is what the server logs every execution.progress.interval
// while a FLUSH or another wait for views has not ended (sql/progress.go).
const waitingLine = "msg=waiting "

// backfillLine is what it logs as often while a CREATE MATERIALIZED
// VIEW's backfill goes on.
const backfillLine = `msg=progress for="backfill of `

// streamdbGoroutines condenses a Go goroutine dump to the goroutines that
// run streamdb code: one entry per distinct stack (function and file:line
// of each frame, arguments and offsets left out), with how many goroutines
// share it and their states, the most frequent first.
func streamdbGoroutines(dump string) string {
	type stack struct {
		frames string
		states map[string]int
		n      int
	}
	var order []*stack
	byFrames := map[string]*stack{}
	for _, g := range strings.Split(dump, "\n\n") {
		g = strings.TrimSpace(g)
		header, body, ok := strings.Cut(g, "\n")
		if !ok || !strings.HasPrefix(header, "goroutine ") || !strings.HasPrefix(body, "streamdb/") && !strings.Contains(body, "\nstreamdb/") {
			continue // no frame is a function of a streamdb package
		}
		state := header
		if i, j := strings.Index(header, "["), strings.LastIndex(header, "]"); i >= 0 && j > i {
			state = header[i+1 : j]
			if k := strings.Index(state, ","); k >= 0 {
				state = state[:k] // "chan receive, 2 minutes"
			}
		}
		var frames []string
		lines := strings.Split(body, "\n")
		for i := 0; i+1 < len(lines); i += 2 {
			fn, file := lines[i], strings.TrimSpace(lines[i+1])
			if strings.HasPrefix(fn, "runtime.") {
				continue // gopark, selectgo, chanrecv, goexit: the state says as much
			}
			if created, ok := strings.CutPrefix(fn, "created by "); ok {
				fn, _, _ = strings.Cut(created, " in goroutine ")
				fn = "created by " + fn
			} else if strings.HasSuffix(fn, ")") {
				if k := strings.LastIndex(fn, "("); k > 0 {
					fn = fn[:k] // the arguments
				}
			}
			if k := strings.LastIndex(file, " +0x"); k > 0 {
				file = file[:k]
			}
			if k := strings.LastIndex(file, "/"); k >= 0 {
				file = file[k+1:]
			}
			frames = append(frames, "    "+fn+" "+file)
		}
		key := strings.Join(frames, "\n")
		st := byFrames[key]
		if st == nil {
			st = &stack{frames: key, states: map[string]int{}}
			byFrames[key] = st
			order = append(order, st)
		}
		st.n++
		st.states[state]++
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].n > order[j].n })
	var b strings.Builder
	for _, st := range order {
		var states []string
		for s, n := range st.states {
			states = append(states, fmt.Sprintf("%s: %d", s, n))
		}
		sort.Strings(states)
		fmt.Fprintf(&b, "%d goroutine(s) [%s]:\n%s\n", st.n, strings.Join(states, ", "), st.frames)
	}
	return b.String()
}
