package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// embeddedStartTimeout bounds the wait for the embedded server to listen.
const embeddedStartTimeout = 30 * time.Second

// fatalLog is the embedded server's logger. The server logs only its
// fatal errors and its store's (streamdb's log is its own). A fatal
// error, such as its client port being taken, is logged and ends the
// wait for the server at once: the server reports such an error only
// through its logger, and without one it would be waited for until
// embeddedStartTimeout.
type fatalLog struct {
	once  sync.Once
	fatal chan struct{} // closed at the first fatal error
	err   error         // the first fatal error, set before fatal is closed
	// writeErrs records the streams whose store failed (stream_errors.go).
	writeErrs *writeErrors
}

func newFatalLog(w *writeErrors) *fatalLog {
	return &fatalLog{fatal: make(chan struct{}), writeErrs: w}
}

func (l *fatalLog) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	slog.Error("embedded NATS: " + msg)
	l.once.Do(func() {
		l.err = errors.New(msg)
		close(l.fatal)
	})
}

// Noticef logs the server's notice that it dropped a client as a slow
// consumer: streamdb's own connection reconnects then, and every publish
// under way fails (publishes are not buffered while reconnecting), so the
// log says why.
func (l *fatalLog) Noticef(format string, v ...any) {
	if strings.Contains(format, "Slow Consumer") {
		slog.Warn("embedded NATS: " + fmt.Sprintf(format, v...))
	}
}
func (l *fatalLog) Warnf(string, ...any) {}

// Errorf logs the server's errors about JetStream's store, which mean
// that something needs the operator (a stream stopped taking writes), and
// records a stream's. Its other errors (a client's bad login, say) are
// left out: clients could fill the log with them.
func (l *fatalLog) Errorf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if strings.Contains(msg, "JetStream") || strings.Contains(strings.ToLower(msg), "write error") {
		slog.Error("embedded NATS: " + msg)
	}
	l.writeErrs.noteServerError(format, v)
}
func (l *fatalLog) Debugf(string, ...any) {}
func (l *fatalLog) Tracef(string, ...any) {}

// startListening starts ns and waits until it listens for clients. It
// fails at once on the server's fatal error (its port taken, JetStream
// refusing its store), and after embeddedStartTimeout otherwise; the
// server is shut down then.
func startListening(ns *server.Server, listen string, w *writeErrors) error {
	log := newFatalLog(w)
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
