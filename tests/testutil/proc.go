package testutil

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// procStatFields returns the fields of /proc/PID/stat that follow the
// command name (the state first), or nil where there is no /proc. The
// name, in parentheses, may hold spaces, so fields count from its ')'.
func procStatFields(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data[i+1:]))
}

// processState is the state letter of /proc/PID/stat ("" where there is
// no /proc).
func processState(pid int) string {
	f := procStatFields(pid)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// ProcessCPU returns the CPU time (user and system) process pid has used,
// or 0 where /proc cannot tell.
func ProcessCPU(pid int) time.Duration {
	f := procStatFields(pid)
	if len(f) < 13 {
		return 0
	}
	// utime and stime are fields 14 and 15 of the line, in clock ticks.
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticksPerSecond = 100 // USER_HZ, 100 on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// ProcKB reads a "Key: N kB" line of a /proc file (/proc/PID/status,
// /proc/meminfo), or 0 where there is none.
func ProcKB(path, key string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// ProcessRSS returns the resident set of process pid and its peak
// (VmRSS and VmHWM) in bytes, or zeros where /proc cannot tell.
func ProcessRSS(pid int) (cur, peak int64) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	return ProcKB(path, "VmRSS") << 10, ProcKB(path, "VmHWM") << 10
}
