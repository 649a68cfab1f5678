package testutil

import (
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
	opts := &natsserver.Options{
		Host:      "127.0.0.1",
		Port:      natsserver.RANDOM_PORT,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	}
	s, err := natsserver.NewServer(opts)
	if err != nil {
		t.Fatalf("testutil: NATS server: %v", err)
	}
	s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatalf("testutil: NATS server not ready within 30s")
	}
	if !s.JetStreamEnabled() {
		t.Fatalf("testutil: NATS server started without JetStream")
	}
	return s
}
