package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// embeddedStartTimeout bounds the wait for the embedded server to listen.
const embeddedStartTimeout = 30 * time.Second

// fatalLog is the embedded server's logger. The server logs nothing else
// (streamdb's log is its own), but a fatal error, such as its client port
// being taken, is logged and ends the wait for the server at once: the
// server reports such an error only through its logger, and without one
// it would be waited for until embeddedStartTimeout.
type fatalLog struct {
	once  sync.Once
	fatal chan struct{} // closed at the first fatal error
	err   error         // the first fatal error, set before fatal is closed
}

func newFatalLog() *fatalLog { return &fatalLog{fatal: make(chan struct{})} }

func (l *fatalLog) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	slog.Error("embedded NATS: " + msg)
	l.once.Do(func() {
		l.err = errors.New(msg)
		close(l.fatal)
	})
}

func (l *fatalLog) Noticef(string, ...any) {}
func (l *fatalLog) Warnf(string, ...any)   {}
func (l *fatalLog) Errorf(string, ...any)  {}
func (l *fatalLog) Debugf(string, ...any)  {}
func (l *fatalLog) Tracef(string, ...any)  {}

// startListening starts ns and waits until it listens for clients. It
// fails at once on the server's fatal error (its port taken, JetStream
// refusing its store), and after embeddedStartTimeout otherwise; the
// server is shut down then.
func startListening(ns *server.Server, listen string) error {
	log := newFatalLog()
	ns.SetLoggerV2(log, false, false, false)
	go ns.Start()
	deadline := time.Now().Add(embeddedStartTimeout)
	for !ns.ReadyForConnections(50 * time.Millisecond) {
		select {
		case <-log.fatal:
			ns.Shutdown()
			return fmt.Errorf("embedded NATS on %s did not start: %v (choose another address with --nats-listen if the port is taken)", listen, log.err)
		default:
		}
		if time.Now().After(deadline) {
			ns.Shutdown()
			return fmt.Errorf("embedded NATS did not start listening on %s within %v", listen, embeddedStartTimeout)
		}
	}
	return nil
}
