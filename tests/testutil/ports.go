package testutil

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago: it
// listens on port 0, notes the port the kernel chose and closes the listener.
// Another process may still take it before the caller does; StartServer
// retries with new ports when that happens.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testutil: FreePort: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreePorts returns n distinct free ports: it holds each listener open
// until all are chosen, so that the kernel cannot hand one port out twice
// (a server's PostgreSQL, NATS and HTTP ports must differ).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("testutil: FreePorts: %v", err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// hostPort formats 127.0.0.1:port.
func hostPort(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// waitPortFree polls until port can be bound on 127.0.0.1 or the deadline
// passes. Go servers set SO_REUSEADDR, so a port in TIME_WAIT binds at once;
// this waits out a previous process that still holds the port.
func waitPortFree(port int, deadline time.Time) error {
	for {
		l, err := net.Listen("tcp", hostPort(port))
		if err == nil {
			l.Close()
			return nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return fmt.Errorf("port %d: %w", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
