package broker

import (
	"fmt"
	"sync"

	"streamdb/sqlerr"
)

// JetStream keeps an I/O error of a stream's store for good: a message
// block whose file could not be opened or written (no file descriptor
// left, say) refuses every later write, and the server does not even
// answer those publishes, so each one times out, until the server restarts
// and loads the stream from disk again, however long ago the cause went
// away. The embedded server logs such an error; the broker records it per
// stream, so that a write to that stream fails at once saying what
// happened and that a restart reopens it, rather than waiting for an
// acknowledgement that cannot come.

// streamWriteErrorFormat is how nats-server logs a stream's store error
// (stream.go, setWriteErrLocked), with the account, the stream and the
// error as arguments.
const streamWriteErrorFormat = "JetStream stream '%s > %s' critical write error: %v"

// writeErrors are the embedded server's streams that stopped taking
// writes, with the error each stopped on.
type writeErrors struct {
	mu       sync.Mutex
	byStream map[string]string
	// changed is closed (and replaced) when a stream is recorded.
	changed chan struct{}
}

func (w *writeErrors) record(stream, cause string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byStream == nil {
		w.byStream = map[string]string{}
	}
	if _, ok := w.byStream[stream]; !ok {
		w.byStream[stream] = cause
		if w.changed != nil {
			close(w.changed)
			w.changed = nil
		}
	}
}

// StreamFailed returns a channel that is closed once the embedded server
// records a stream's store error after the call (never with an external
// server): a publish waiting for its acknowledgement can then stop
// waiting, as none will come if its stream is the one.
func (b *Broker) StreamFailed() <-chan struct{} {
	if b.writeErrs == nil {
		return nil
	}
	w := b.writeErrs
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed == nil {
		w.changed = make(chan struct{})
	}
	return w.changed
}

func (w *writeErrors) get(stream string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cause, ok := w.byStream[stream]
	return cause, ok
}

// noteServerError records a stream's store error from one of the embedded
// server's error log lines.
func (w *writeErrors) noteServerError(format string, v []any) {
	if format == streamWriteErrorFormat && len(v) == 3 {
		w.record(fmt.Sprint(v[1]), fmt.Sprint(v[2]))
	}
}

// StreamWriteError returns, when the embedded server's JetStream stream
// has stopped taking writes after an error of its store, the error a
// write to it gets (58030, saying that a restart reopens the stream);
// nil otherwise and with an external server. what names the write
// ("could not write to table \"t\"").
func (b *Broker) StreamWriteError(stream, what string) *sqlerr.Error {
	if b.writeErrs == nil {
		return nil
	}
	cause, ok := b.writeErrs.get(stream)
	if !ok {
		return nil
	}
	return sqlerr.New(sqlerr.IOError, "%s: JetStream stream %s stopped taking writes after an error of its store (%s)", what, stream, cause).
		WithHint("The embedded NATS server reopens the stream only when streamdb restarts: remove the cause (free file descriptors or disk space), then restart streamdb. Writes the stream refused were not stored.")
}
