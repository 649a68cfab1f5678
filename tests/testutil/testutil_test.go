package testutil

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "tests", "testutil", "build.go")); err != nil {
		t.Fatalf("RepoRoot %s: %v", root, err)
	}
}

func TestFreePort(t *testing.T) {
	p := FreePort(t)
	if p <= 0 || p > 65535 {
		t.Fatalf("FreePort = %d", p)
	}
	if err := waitPortFree(p, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
}

func TestLastLines(t *testing.T) {
	if got := lastLines("a\nb\nc\n", 2); got != "... (1 lines before)\nb\nc" {
		t.Fatalf("lastLines = %q", got)
	}
	if got := lastLines("a\n", 5); got != "a" {
		t.Fatalf("lastLines = %q", got)
	}
}

func TestStartPostgres(t *testing.T) {
	pg := StartPostgres(t)
	conn := pg.Conn(t)
	var version, tz string
	if err := conn.QueryRow(context.Background(), "SELECT current_setting('server_version'), current_setting('TimeZone')").Scan(&version, &tz); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL %s, TimeZone %s, port %d", version, tz, pg.Port)
	if tz != "UTC" {
		t.Errorf("TimeZone = %q, want UTC", tz)
	}
	pg.Stop(t)
	pg.Stop(t) // idempotent
}

func TestStartNATS(t *testing.T) {
	url := StartNATS(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish(ctx, "t.x", []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if ack.Sequence != 1 {
		t.Fatalf("sequence = %d", ack.Sequence)
	}
}

// TestServerLifecycle drives StartServer, Stop, Kill and Restart with a fake
// server binary that forwards to a real PostgreSQL.
func TestServerLifecycle(t *testing.T) {
	pg := StartPostgres(t)
	admin := pg.Conn(t)
	for _, q := range []string{"CREATE ROLE streamdb LOGIN", "CREATE DATABASE streamdb OWNER streamdb"} {
		if _, err := admin.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	bin := buildFakeServer(t)
	s := StartServer(t, ServerOptions{
		Binary: bin,
		Env:    []string{"FAKE_UPSTREAM=127.0.0.1:" + strconv.Itoa(pg.Port)},
	})
	if !strings.HasPrefix(s.NATSURL(), "nats://127.0.0.1:") || s.NATSPort == 0 {
		t.Errorf("NATSURL = %q", s.NATSURL())
	}
	query1 := func() {
		t.Helper()
		var n int
		if err := s.Conn(t).QueryRow(context.Background(), "SELECT 1").Scan(&n); err != nil || n != 1 {
			t.Fatalf("SELECT 1 = %d, %v", n, err)
		}
	}
	query1()
	port, pid := s.Port, s.PID()

	s.Restart(t) // clean stop + start on the same port
	if s.Port != port || s.PID() == pid || !s.Running() {
		t.Fatalf("after Restart: port %d (was %d), pid %d (was %d)", s.Port, port, s.PID(), pid)
	}
	query1()

	s.Kill(t)
	if s.Running() {
		t.Fatal("still running after Kill")
	}
	s.Restart(t)
	query1()
	s.Stop(t)
	if got := strings.Count(s.Logs(), "=== testutil:"); got != 3 {
		t.Errorf("log has %d runs, want 3:\n%s", got, s.Logs())
	}
	if !strings.Contains(s.Logs(), "fakeserver stopping") {
		t.Errorf("no SIGTERM seen in log:\n%s", s.Logs())
	}
}

// TestLaunchFailure checks that a server that dies at start is reported
// with its output instead of being waited for until the deadline.
func TestLaunchFailure(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "dies.sh")
	writeExecutable(t, script, "#!/bin/sh\necho 'boom: cannot start' >&2\nexit 3\n")
	s := &Server{LogPath: filepath.Join(dir, "log"), opts: ServerOptions{Binary: script}}
	s.pickPorts(t)
	// The deadline is far past the test's timeout: a launch that waited
	// for it instead of noticing the exit fails the test by its timeout.
	err := s.launch(time.Now().Add(24 * time.Hour))
	if err == nil || !strings.Contains(err.Error(), "boom: cannot start") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("launch error = %v", err)
	}
}

// TestLaunchHangs checks that a server that hangs at start is ended with
// SIGQUIT when its deadline passes, and reported with what it logged and
// where its goroutines were.
func TestLaunchHangs(t *testing.T) {
	bin := buildFakeServer(t)
	dir := t.TempDir()
	s := &Server{LogPath: filepath.Join(dir, "log"), opts: ServerOptions{Binary: bin, Env: []string{"FAKE_HANG=1"}}}
	s.pickPorts(t)
	err := s.launch(time.Now().Add(time.Second))
	if err == nil {
		t.Fatal("a server that never listened was ready")
	}
	for _, want := range []string{"not ready", "fakeserver starting", "--- goroutines (SIGQUIT) ---", "main.hangWhileStarting"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("launch error lacks %q:\n%v", want, err)
		}
	}
}

// TestLaunchNATSPortTaken: a streamdb whose embedded NATS port was taken
// (by another process, between FreePorts and the start) exits at once
// with an error StartServer retries on new ports; it does not hang until
// the embedded server's start timeout.
func TestLaunchNATSPortTaken(t *testing.T) {
	s := &Server{LogPath: filepath.Join(t.TempDir(), "log"), DataDir: t.TempDir(), opts: ServerOptions{Binary: BuildServer(t)}}
	s.pickPorts(t)
	l, err := net.Listen("tcp", hostPort(s.NATSPort))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := time.Now()
	err = s.launch(start.Add(time.Minute))
	if took := time.Since(start); !errors.Is(err, errAddrInUse) || took > 10*time.Second {
		t.Fatalf("launch after %v: %v; want at once an error StartServer retries (%v)", took, err, errAddrInUse)
	}
}

func TestBuildServerFromEnv(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "streamdb")
	writeExecutable(t, bin, "#!/bin/sh\n")
	t.Setenv(EnvServerBinary, bin)
	got, err := buildServer()
	if err != nil || got != bin {
		t.Fatalf("buildServer() = %q, %v; want %q", got, err, bin)
	}
	t.Setenv(EnvServerBinary, bin+".missing")
	if _, err := buildServer(); err == nil {
		t.Fatal("a missing $STREAMDB_BIN was accepted")
	}
}

func TestRemoveStaleBinDirs(t *testing.T) {
	stale := filepath.Join(os.TempDir(), binDirPrefix+"999999999-test")
	live := filepath.Join(os.TempDir(), binDirPrefix+strconv.Itoa(os.Getpid())+"-test")
	for _, d := range []string{stale, live} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.RemoveAll(live)
	removeStaleBinDirs()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale dir not removed: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("live dir removed: %v", err)
	}
}

// buildFakeServer builds testdata/fakeserver, which stands in for
// streamdb, and returns its path.
func buildFakeServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fakeserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/fakeserver").CombinedOutput(); err != nil {
		t.Fatalf("building fakeserver: %v\n%s", err, out)
	}
	return bin
}

func writeExecutable(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestStreamdbGoroutines: a SIGQUIT dump condenses to the goroutines in
// streamdb code, one entry per stack, arguments and offsets left out.
func TestStreamdbGoroutines(t *testing.T) {
	dump := `goroutine 1 [running]:
main.main()
	/src/cmd/streamdb/main.go:10 +0x1d

goroutine 7 [chan receive, 2 minutes]:
runtime.gopark(0x0?, 0x0?, 0x0?, 0x0?, 0x0?)
	/usr/local/go/src/runtime/proc.go:462 +0xce
streamdb/exec.(*subjectReader).reach(0xc000123, 0x1b8)
	/src/exec/shared_source.go:340 +0x1a5
streamdb/exec.(*subjectReader).round(0xc000123)
	/src/exec/shared_source.go:180 +0x4f
created by streamdb/exec.(*readerGroups).join in goroutine 51
	/src/exec/shared_source_merge.go:150 +0x2c5

goroutine 9 [chan receive]:
streamdb/exec.(*subjectReader).reach(0xc000456, 0x1b9)
	/src/exec/shared_source.go:340 +0x1a5
streamdb/exec.(*subjectReader).round(0xc000456)
	/src/exec/shared_source.go:180 +0x4f
created by streamdb/exec.(*readerGroups).join in goroutine 60
	/src/exec/shared_source_merge.go:150 +0x2c5

goroutine 12 [select]:
net/http.(*persistConn).readLoop(0xc0)
	/usr/lib/go/src/net/http/transport.go:2395 +0xc8
`
	want := `2 goroutine(s) [chan receive: 2]:
    streamdb/exec.(*subjectReader).reach shared_source.go:340
    streamdb/exec.(*subjectReader).round shared_source.go:180
    created by streamdb/exec.(*readerGroups).join shared_source_merge.go:150
`
	if got := streamdbGoroutines(dump); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
