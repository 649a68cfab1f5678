package testutil

import (
	"net"
	"strconv"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// StartNATS runs a standalone NATS server with JetStream inside the test
// process, on a free port of 127.0.0.1 with its store in a temporary
// directory, and returns its client URL. t.Cleanup shuts it down.
func StartNATS(t testing.TB) string {
	t.Helper()
	return StartNATSServer(t).ClientURL()
}

// StartNATSServer is StartNATS returning the server itself, for tests that
// need to inspect or restart it.
func StartNATSServer(t testing.TB) *natsserver.Server {
	t.Helper()
	return StartNATSServerWith(t, nil)
}

// StartNATSServerWith is StartNATSServer with configure given the options
// first (users, permissions, limits); nil changes nothing.
func StartNATSServerWith(t testing.TB, configure func(*natsserver.Options)) *natsserver.Server {
	t.Helper()
	opts := natsOptions(t)
	if configure != nil {
		configure(opts)
	}
	s := runNATS(t, opts)
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatalf("testutil: NATS server not ready within 30s")
	}
	if !s.JetStreamEnabled() {
		t.Fatalf("testutil: NATS server started without JetStream")
	}
	return s
}

// RestartNATS starts a JetStream server on addr ("host:port") over
// storeDir, the store of one the test shut down: the same server coming
// back, for tests of an outage. It is shut down with the test, after the
// streamdb servers given (cleanups run last registered first): a server
// whose NATS is gone would wait out its timeouts while it shuts down.
func RestartNATS(t testing.TB, addr, storeDir string, users ...*Server) *natsserver.Server {
	t.Helper()
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("testutil: NATS address %q: %v", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		t.Fatalf("testutil: NATS address %q: %v", addr, err)
	}
	s := runNATS(t, &natsserver.Options{Host: host, Port: port, JetStream: true, StoreDir: storeDir, NoLog: true, NoSigs: true})
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatal("testutil: NATS did not come back within 30s")
	}
	for _, u := range users {
		t.Cleanup(func() { u.Stop(t) })
	}
	return s
}

// natsOptions are the options of a test's NATS server: JetStream on, a
// random client port on loopback, its store in the test's temporary
// directory.
func natsOptions(t testing.TB) *natsserver.Options {
	return &natsserver.Options{
		Host:      "127.0.0.1",
		Port:      natsserver.RANDOM_PORT,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	}
}

// runNATS starts a NATS server with opts, shut down with the test.
func runNATS(t testing.TB, opts *natsserver.Options) *natsserver.Server {
	t.Helper()
	s, err := natsserver.NewServer(opts)
	if err != nil {
		t.Fatalf("testutil: NATS server %s: %v", opts.ServerName, err)
	}
	s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}
