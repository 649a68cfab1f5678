package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"streamdb/tests/testutil"
)

// Idle keep-alive connections to the HTTP endpoint cannot take the file
// descriptors the rest of the server needs: with the server's descriptor
// limit lowered to a little above what it uses, many more idle
// connections than http.max-connections leave the PostgreSQL port and
// table writes working, the endpoint keeps answering, and idle
// connections are closed after http.idle-timeout.
func TestHTTPIdleConnectionsBounded(t *testing.T) {
	const maxConns, idle = 8, 120
	srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{
		"STREAMDB_HTTP_MAX_CONNECTIONS=" + fmt.Sprint(maxConns),
		"STREAMDB_HTTP_IDLE_TIMEOUT=3s",
	}})
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE hk (id BIGINT PRIMARY KEY, v BIGINT)", "INSERT INTO hk VALUES (1, 1)")
	wantRows(t, conn, "SHOW http.max-connections", fmt.Sprint(maxConns))

	// Room for the server's own files and a few sessions, not for the
	// idle connections.
	pid := srv.PID()
	used := openFDs(t, pid)
	limit := uint64(used + maxConns + 40)
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: limit}, nil); err != nil {
		t.Skipf("cannot lower the server's descriptor limit: %v", err)
	}
	t.Logf("server uses %d descriptors; limit %d; %d idle HTTP connections", used, limit, idle)

	addr := fmt.Sprintf("127.0.0.1:%d", srv.HTTPPort)
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	for i := 0; i < idle; i++ {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d to the HTTP endpoint: %v", i, err)
		}
		held = append(held, c)
		// Each new connection takes the place of an idle one.
		if err := healthz(c); err != nil {
			t.Fatalf("GET /healthz on connection %d, with %d open before it: %v", i, i, err)
		}
	}
	if n := openFDs(t, pid); n > used+maxConns+20 {
		t.Errorf("the server holds %d descriptors with %d idle HTTP connections open; it used %d before", n, idle, used)
	}

	// The PostgreSQL port and table writes work meanwhile.
	other := srv.Conn(t)
	for i := 2; i <= 20; i++ {
		exec(t, other, fmt.Sprintf("INSERT INTO hk VALUES (%d, %d)", i, i))
	}
	wantRows(t, conn, "SELECT count(*), sum(v) FROM hk", "20 210")

	// The connections still open are closed by the server once idle for
	// http.idle-timeout.
	deadline := time.Now().Add(30 * time.Second)
	for i, c := range held {
		c.SetReadDeadline(deadline)
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, unix.ECONNRESET) {
			t.Fatalf("idle connection %d: read %v, want it closed by the server", i, err)
		}
	}
	wantRows(t, other, "SELECT count(*) FROM hk", "20")
}

// healthz sends GET /healthz on c and reads the answer, leaving c open.
func healthz(c net.Conn) error {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: streamdb\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

// openFDs counts the file descriptors process pid has open.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("count the server's descriptors: %v", err)
	}
	return len(ents)
}
