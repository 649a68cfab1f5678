package testutil

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/broker"
	"streamdb/sqlerr"
)

// Default timeouts of StartServer and Stop.
const (
	DefaultReadyTimeout = 60 * time.Second
	DefaultStopTimeout  = 30 * time.Second
)

// ServerOptions configures StartServer. The zero value starts a server with
// an embedded NATS server and a fresh data directory.
type ServerOptions struct {
	// Binary is the streamdb executable; default BuildServer(t).
	Binary string
	// DataDir is passed as --data-dir; default a new t.TempDir().
	DataDir string
	// NATSURL, when set, is passed as --nats-url (an external NATS, e.g.
	// from StartNATS); otherwise the embedded NATS server listens on a free
	// port given by --nats-listen.
	NATSURL string
	// ConfigFile, when set, is passed as --config.
	ConfigFile string
	// Args are extra command-line arguments, appended last.
	Args []string
	// Env holds extra KEY=VALUE environment entries on top of os.Environ().
	Env []string
	// ReadyTimeout bounds the wait for `SELECT 1` to answer; default 60s.
	ReadyTimeout time.Duration
	// StopTimeout bounds the wait for exit after SIGTERM; default 30s.
	StopTimeout time.Duration
	// Standby: the server may start as a standby of an --ha-group, which
	// refuses sessions with 57P03; that refusal counts as ready too.
	Standby bool
}

// Server is a running (or stopped) streamdb process started by StartServer.
// Its methods are meant to be called from the test's goroutine.
type Server struct {
	// Addr is the PostgreSQL protocol address, 127.0.0.1:Port.
	Addr string
	// Port is the PostgreSQL protocol port.
	Port int
	// NATSPort is the embedded NATS client port; 0 with an external NATS.
	NATSPort int
	// HTTPPort is the port of the metrics and health endpoint.
	HTTPPort int
	// DataDir is the server's data directory; it survives Restart.
	DataDir string
	// LogPath is the file that collects the server's stdout and stderr
	// across all runs (each run starts with a "=== testutil:" marker line).
	LogPath string

	t    testing.TB
	opts ServerOptions
	proc *process
}

// process is one run of the binary.
type process struct {
	cmd      *exec.Cmd
	done     chan struct{} // closed when the process has exited
	err      error         // result of Wait, valid once done is closed
	logStart int64         // offset in the log file where this run begins
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// StartServer starts streamdb on free ports and waits until it answers
// `SELECT 1`. The server is stopped (SIGTERM) by t.Cleanup, and if the test
// failed the last lines of its log are printed. A server that hangs (not
// ready by the deadline, still starting when the test failed, or not
// gone after SIGTERM) is ended with SIGQUIT, so that the report shows
// its goroutines. $STREAMDB_TEST_LOG_DIR keeps every server's log.
func StartServer(t testing.TB, opts ServerOptions) *Server {
	t.Helper()
	if opts.Binary == "" {
		opts.Binary = BuildServer(t)
	}
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	logDir := t.TempDir()
	s := &Server{
		DataDir: opts.DataDir,
		LogPath: filepath.Join(logDir, "streamdb.log"),
		t:       t,
		opts:    opts,
	}
	// Cleanups run last-in first-out: stop first, then keep the log, then
	// remove the temporary directories created above.
	t.Cleanup(func() { keepLog(t, s) })
	t.Cleanup(func() { s.finish(t) })

	deadline := time.Now().Add(opts.ReadyTimeout)
	for attempt := 1; ; attempt++ {
		s.pickPorts(t)
		err := s.launch(deadline)
		if err == nil {
			return s
		}
		if !errors.Is(err, errAddrInUse) || attempt == 3 {
			t.Fatalf("testutil: starting streamdb: %v", err)
		}
		t.Logf("testutil: port taken, retrying with new ports: %v", err)
	}
}

func (s *Server) pickPorts(t testing.TB) {
	ports := FreePorts(t, 3)
	s.Port, s.HTTPPort = ports[0], ports[1]
	s.Addr = hostPort(s.Port)
	if s.opts.NATSURL == "" {
		s.NATSPort = ports[2]
	}
}

// HTTPURL is the base URL of the server's metrics and health endpoint,
// e.g. HTTPURL()+"/metrics".
func (s *Server) HTTPURL() string { return "http://" + hostPort(s.HTTPPort) }

// DSN returns a PostgreSQL URL for the server.
func (s *Server) DSN() string {
	return fmt.Sprintf("postgres://streamdb@%s/streamdb?sslmode=disable&connect_timeout=10", s.Addr)
}

// NATSURL returns the URL of the NATS server that streamdb uses: the
// external one given in ServerOptions, or the embedded one. For the
// embedded one it carries the credentials of streamdb's own NATS user,
// read from the data directory (as an operator would), so that tests may
// also inspect and change tables' JetStream streams; producers get less
// (broker.ProducerUser; see tests/e2e/nats_auth_test.go).
func (s *Server) NATSURL() string {
	if s.opts.NATSURL != "" {
		return s.opts.NATSURL
	}
	data, err := os.ReadFile(filepath.Join(s.DataDir, broker.ServerPasswordFile))
	if pw := strings.TrimSpace(string(data)); err == nil && pw != "" {
		u := url.URL{Scheme: "nats", User: url.UserPassword(broker.ServerUser, pw), Host: hostPort(s.NATSPort)}
		return u.String()
	}
	return fmt.Sprintf("nats://%s", hostPort(s.NATSPort))
}

// PID returns the process id of the current run, or 0 when not running.
func (s *Server) PID() int {
	if s.proc == nil || s.proc.exited() {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// Running reports whether the server process is alive.
func (s *Server) Running() bool { return s.PID() != 0 }

// Logs returns everything the server has written to stdout and stderr so far.
func (s *Server) Logs() string {
	data, _ := os.ReadFile(s.LogPath)
	return string(data)
}

// Conn opens a pgx connection to the server, closed by t.Cleanup. A
// refusal for too many clients (53300) is retried for a few seconds: the
// server frees the slot of a connection that closed (StartServer's own
// readiness check, a test's earlier session) only once it has seen the
// close. Tests of the limit itself connect with pgx directly.
func (s *Server) Conn(t testing.TB) *pgx.Conn {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		conn, err := pgx.Connect(ctx, s.DSN())
		cancel()
		var pe *pgconn.PgError
		if err != nil && errors.As(err, &pe) && pe.Code == sqlerr.TooManyConnections && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // poll interval while the slot frees
			continue
		}
		if err != nil {
			t.Fatalf("testutil: connecting to %s: %v", s.DSN(), err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			conn.Close(ctx)
		})
		return conn
	}
}

// ConnDSN opens a pgx connection to dsn (a server's DSN with parameters
// added, say), closed when the test ends.
func ConnDSN(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	return connect(t, dsn)
}

func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("testutil: connecting to %s: %v", dsn, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn.Close(ctx)
	})
	return conn
}

// finish stops the server when its test ends. If the test failed, it
// prints the end of the log; a server that is still starting then (it
// never logged that it was ready: a standby, or a start that hangs) is
// ended with SIGQUIT instead, and the report carries its goroutines. So
// is a server that logged a wait that had not ended (a FLUSH or a backfill
// that hangs):
// the report then lists its goroutines in streamdb code, one per stack.
func (s *Server) finish(t testing.TB) {
	t.Helper()
	p := s.proc
	if t.Failed() && p != nil && !p.exited() && s.waited(p) {
		s.proc = nil
		quitForStacks(p)
		out, _ := readFrom(s.LogPath, p.logStart)
		_, dump, _ := strings.Cut(out, goroutineDumpMarker)
		logged, _, _ := strings.Cut(out, goroutineDumpMarker)
		t.Logf("testutil: streamdb on %s logged a wait that had not ended when the test failed; ended it with SIGQUIT (every stack is in %s; $STREAMDB_TEST_LOG_DIR keeps it). Last lines of this run:\n%s\n--- goroutines in streamdb code, by stack ---\n%s",
			s.Addr, s.LogPath, lastLines(logged, 60), streamdbGoroutines(dump))
		return
	}
	if !t.Failed() || p == nil || p.exited() || s.ready(p) {
		s.Stop(t)
		if t.Failed() {
			t.Logf("testutil: last lines of %s:\n%s", s.LogPath, tailFile(s.LogPath, 100))
		}
		return
	}
	s.proc = nil
	quitForStacks(p)
	t.Logf("testutil: streamdb on %s was still starting when the test failed; ended it with SIGQUIT. Last lines of this run in %s:\n%s",
		s.Addr, s.LogPath, runReport(s.LogPath, p.logStart, 100))
}

// What the server logs once it serves queries, and when it restarts
// itself as a standby (the same process, so the same run of the log).
const (
	readyLine    = "streamdb ready"
	stepDownLine = "stepping down to standby"
)

// ready reports whether run p serves queries: it logged so, and has not
// stepped down since.
func (s *Server) ready(p *process) bool {
	out, err := readFrom(s.LogPath, p.logStart)
	return err == nil && strings.LastIndex(out, readyLine) > strings.LastIndex(out, stepDownLine)
}

// waited reports whether run p logged a wait for views (FLUSH, a read of
// a write, a backfill) still waiting (sql/progress.go).
func (s *Server) waited(p *process) bool {
	out, err := readFrom(s.LogPath, p.logStart)
	return err == nil && (strings.Contains(out, waitingLine) || strings.Contains(out, backfillLine))
}

// Stop sends SIGTERM and waits up to StopTimeout for the process to exit,
// then sends SIGQUIT (the report carries its goroutines' stacks). A clean
// shutdown must exit with status 0: the test fails if the process needed
// SIGQUIT, exited non-zero, or had already died on its own since it was
// started. Stop on a stopped server does nothing.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	p := s.proc
	if p == nil {
		return
	}
	s.proc = nil
	if p.exited() {
		t.Errorf("testutil: streamdb exited unexpectedly before Stop: %v", exitDesc(p.err))
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // a stopped process (Signal) must run to exit
	select {
	case <-p.done:
		if p.err != nil {
			t.Errorf("testutil: streamdb did not shut down cleanly on SIGTERM: %v", exitDesc(p.err))
		}
	case <-time.After(s.opts.StopTimeout):
		quitForStacks(p)
		t.Errorf("testutil: streamdb did not exit within %v of SIGTERM; ended it with SIGQUIT. Last lines of this run:\n%s",
			s.opts.StopTimeout, runReport(s.LogPath, p.logStart, 60))
	}
}

// Kill sends SIGKILL (a crash, as kill -9) and waits for the process to go.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	p := s.proc
	if p == nil {
		return
	}
	s.proc = nil
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("testutil: streamdb (pid %d) still alive 30s after SIGKILL", p.cmd.Process.Pid)
	}
}

// Signal sends sig to the running server: SIGSTOP and SIGCONT pause and
// resume it (a process stalled past its lease).
func (s *Server) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if s.proc == nil {
		t.Fatalf("testutil: Signal(%v): streamdb is not running", sig)
	}
	if err := s.proc.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("testutil: Signal(%v): %v", sig, err)
	}
	if sig == syscall.SIGSTOP {
		// The signal is delivered asynchronously: wait until the
		// process is seen stopped, so nothing after this runs in it.
		pid := s.proc.cmd.Process.Pid
		Poll(t, 10*time.Second, "the process to stop", func() error {
			if st := processState(pid); st != "T" && st != "" {
				return fmt.Errorf("state %q", st)
			}
			return nil
		})
	}
}

// Restart stops the server if it is running (as Stop does) and starts it
// again with the same data directory, ports and options, waiting until it
// answers `SELECT 1`. It also starts a server that was killed.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	deadline := time.Now().Add(s.opts.ReadyTimeout)
	for {
		err := waitPortFree(s.Port, deadline)
		if err == nil && s.NATSPort != 0 {
			err = waitPortFree(s.NATSPort, deadline)
		}
		if err == nil {
			err = waitPortFree(s.HTTPPort, deadline)
		}
		if err == nil {
			err = s.launch(deadline)
		}
		if err == nil {
			return
		}
		if !errors.Is(err, errAddrInUse) || time.Now().After(deadline) {
			t.Fatalf("testutil: restarting streamdb: %v", err)
		}
	}
}

// args returns the command line of the server.
func (s *Server) args() []string {
	args := []string{"--listen", s.Addr, "--data-dir", s.DataDir, "--http-listen", hostPort(s.HTTPPort)}
	if s.opts.NATSURL != "" {
		args = append(args, "--nats-url", s.opts.NATSURL)
	} else {
		args = append(args, "--nats-listen", hostPort(s.NATSPort))
	}
	if s.opts.ConfigFile != "" {
		args = append(args, "--config", s.opts.ConfigFile)
	}
	return append(args, s.opts.Args...)
}

// errAddrInUse marks a run that died because a port was taken.
var errAddrInUse = errors.New("address already in use")

// launch starts one run and waits for readiness until deadline. On failure
// the process is killed and the error carries the end of its log.
func (s *Server) launch(deadline time.Time) error {
	f, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	start, _ := f.Seek(0, 2)
	args := s.args()
	fmt.Fprintf(f, "=== testutil: %s %s\n", s.opts.Binary, strings.Join(args, " "))

	cmd := exec.Command(s.opts.Binary, args...)
	cmd.Dir = filepath.Dir(s.LogPath)
	cmd.Env = append(os.Environ(), s.opts.Env...)
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.SysProcAttr = sysProcAttr()
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	p := &process{cmd: cmd, done: make(chan struct{}), logStart: start}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()

	if err := s.waitReady(p, deadline); err != nil {
		// A server that hangs is ended with SIGQUIT: its goroutines'
		// stacks say where.
		quitForStacks(p)
		out := runReport(s.LogPath, p.logStart, 60)
		if strings.Contains(out, "address already in use") {
			err = fmt.Errorf("%w: %v", errAddrInUse, err)
		}
		return fmt.Errorf("%w\n--- streamdb output ---\n%s", err, out)
	}
	s.proc = p
	if took := time.Since(begin); took > slowStart && s.t != nil {
		s.t.Logf("testutil: streamdb on %s took %v to start; this run's log:\n%s", s.Addr, took.Round(time.Millisecond), tailFrom(s.LogPath, p.logStart, 60))
	}
	return nil
}

// waitReady polls `SELECT 1` until it answers, the process exits or the
// deadline passes.
func (s *Server) waitReady(p *process, deadline time.Time) error {
	var lastErr error
	for {
		if p.exited() {
			return fmt.Errorf("streamdb exited before it was ready: %v", exitDesc(p.err))
		}
		if lastErr = ping(s.DSN(), deadline); lastErr == nil || (s.opts.Standby && SQLState(lastErr) == sqlerr.CannotConnectNow) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("streamdb not ready on %s by the deadline: %v", s.Addr, lastErr)
		}
		select {
		case <-p.done:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ping connects to dsn and runs SELECT 1 with the simple query protocol.
func ping(dsn string, deadline time.Time) error {
	timeout := time.Until(deadline)
	if timeout > 5*time.Second {
		timeout = 5 * time.Second
	}
	if timeout < 100*time.Millisecond {
		timeout = 100 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, "SELECT 1").ReadAll()
	return err
}

// exitDesc describes a Wait result.
func exitDesc(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// SetEnv replaces the extra environment entries (ServerOptions.Env) the
// server gets from its next start on.
func (s *Server) SetEnv(env ...string) { s.opts.Env = env }
