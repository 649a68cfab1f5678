package testutil

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestProcReaders reads this test process's own /proc entries: its CPU
// time agrees with getrusage's after it spins (in user code, so that a
// reader of the system time alone would be far off), it is resident with
// a peak at least as large, and it is running or sleeping.
func TestProcReaders(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	pid := os.Getpid()
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	want := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	// /proc counts in 10 ms ticks, and the runtime's threads go on
	// between the two readings.
	if got := ProcessCPU(pid); got < want-50*time.Millisecond || got > want+50*time.Millisecond {
		t.Errorf("ProcessCPU = %v, getrusage says %v", got, want)
	}
	cur, peak := ProcessRSS(pid)
	if cur <= 0 || peak < cur {
		t.Errorf("ProcessRSS = %d, peak %d", cur, peak)
	}
	if st := processState(pid); st != "R" && st != "S" {
		t.Errorf("processState = %q, want R or S", st)
	}
	if ProcKB("/proc/meminfo", "MemTotal") <= 0 {
		t.Error("ProcKB found no MemTotal in /proc/meminfo")
	}
}
