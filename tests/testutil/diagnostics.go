package testutil

import (
	"fmt"
	"os"
	"path/filepath"
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
