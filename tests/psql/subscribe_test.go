package psql

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestCopySubscribe: psql -c "COPY (SUBSCRIBE v) TO STDOUT" prints the
// view's rows (epoch, diff, columns, tab-separated) as the feed goes, and
// Ctrl-C (SIGINT: psql sends a CancelRequest) ends it with the cancel
// message.
func TestCopySubscribe(t *testing.T) {
	bin := psqlBin(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	execAll(t, conn, "CREATE TABLE kv (k int PRIMARY KEY, v text)",
		"INSERT INTO kv VALUES (1, 'one'), (2, NULL)",
		"CREATE MATERIALIZED VIEW m AS SELECT k, v FROM kv")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// psql writes COPY data through stdio: stdbuf makes it flush each
	// write to the pipe instead of at exit.
	stdbuf, err := exec.LookPath("stdbuf")
	if err != nil {
		t.Skip("stdbuf is not installed")
	}
	cmd := exec.CommandContext(ctx, stdbuf, "-o0", bin, "-X", "-h", "127.0.0.1", "-p", fmt.Sprint(srv.Port),
		"-U", "streamdb", "-d", "streamdb", "-c", "COPY (SUBSCRIBE m) TO STDOUT")
	cmd.Env = append(cmd.Environ(), "PGCONNECT_TIMEOUT=10", "PAGER=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errOut, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	stderrDone := make(chan struct{})
	go func() {
		stderr.ReadFrom(errOut)
		close(stderrDone)
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() []string {
		select {
		case l, ok := <-lines:
			if !ok {
				<-stderrDone
				t.Fatalf("psql ended: %s", stderr.String())
			}
			return strings.Split(l, "\t")
		case <-ctx.Done():
			t.Fatalf("no line from psql")
		}
		return nil
	}
	var snap []string
	for range 2 {
		f := next()
		snap = append(snap, strings.Join(f[1:], " "))
	}
	slices.Sort(snap)
	if want := []string{"1 1 one", `1 2 \N`}; !slices.Equal(snap, want) {
		t.Fatalf("snapshot %q, want %q", snap, want)
	}
	execAll(t, conn, "UPDATE kv SET v = 'two' WHERE k = 2")
	var change []string
	for range 2 {
		change = append(change, strings.Join(next()[1:], " "))
	}
	if want := []string{`-1 2 \N`, "1 2 two"}; !slices.Equal(change, want) {
		t.Fatalf("changes %q, want %q", change, want)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	<-stderrDone
	err = cmd.Wait()
	if err == nil || !strings.Contains(stderr.String(), "canceling statement due to user request") {
		t.Fatalf("psql after SIGINT: %v, stderr %q", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "NOTICE") {
		t.Errorf("COPY (SUBSCRIBE m) TO STDOUT sent a notice: %q", stderr.String())
	}
}

// TestPlainSubscribeNotice: a plain SUBSCRIBE typed in psql would show
// nothing until cancelled, and the cancel discards its rows; psql prints
// a NOTICE as soon as it arrives, so the server says so at once and
// names the COPY form that prints rows as they come.
func TestPlainSubscribeNotice(t *testing.T) {
	bin := psqlBin(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	execAll(t, srv.Conn(t), "CREATE TABLE kv (k int PRIMARY KEY, v text)",
		"INSERT INTO kv VALUES (1, 'one')",
		"CREATE MATERIALIZED VIEW \"My View\" AS SELECT k, v FROM kv")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-X", "-h", "127.0.0.1", "-p", fmt.Sprint(srv.Port),
		"-U", "streamdb", "-d", "streamdb", "-c", `SUBSCRIBE "My View"`)
	// psql names itself in application_name unless PGAPPNAME is set.
	cmd.Env = slices.DeleteFunc(cmd.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PGAPPNAME=") })
	cmd.Env = append(cmd.Env, "PGCONNECT_TIMEOUT=10", "PAGER=")
	var mu sync.Mutex
	var stderr bytes.Buffer
	errOut, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := errOut.Read(buf)
			mu.Lock()
			stderr.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	want := []string{"NOTICE:  psql prints no row of SUBSCRIBE until it ends, and Ctrl-C discards the rows it has",
		`COPY (SUBSCRIBE "My View") TO STDOUT`}
	testutil.Poll(t, 30*time.Second, "psql to print the NOTICE while SUBSCRIBE runs", func() error {
		mu.Lock()
		defer mu.Unlock()
		for _, w := range want {
			if !strings.Contains(stderr.String(), w) {
				return fmt.Errorf("psql's stderr %q lacks %q", stderr.String(), w)
			}
		}
		return nil
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-done
	cmd.Wait()
}
