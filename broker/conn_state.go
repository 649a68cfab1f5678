package broker

import (
	"log/slog"
	"sync/atomic"

	"github.com/nats-io/nats.go"
)

// Every write asks whether the connection to NATS is up and how large a
// message may be. nats.Conn answers both under its connection lock, which
// every publish, every acknowledgement and the connection's flusher also
// take: with many sessions asking once per statement, the group-commit
// leader's publish queued behind them. So the broker keeps both answers
// itself, from the connection's callbacks, and writers read them without
// a lock.

// connState mirrors a nats.Conn's status and server limits.
type connState struct {
	up         atomic.Bool
	maxPayload atomic.Int64
}

// watch installs nc's callbacks, then reads its state: a change between
// the connect and the callbacks is seen by the read, one after it by the
// callbacks. The callbacks run one at a time, in the order of the events.
func (s *connState) watch(nc *nats.Conn) {
	nc.SetDisconnectErrHandler(func(_ *nats.Conn, err error) {
		s.up.Store(false)
		if err != nil {
			// Every publish under way fails until the reconnect (they
			// are not buffered): the log says why they did.
			slog.Warn("the connection to NATS dropped; reconnecting", "err", err)
		}
	})
	nc.SetClosedHandler(func(*nats.Conn) { s.up.Store(false) })
	// Asynchronous errors (a subscription over its pending limits drops
	// messages as a slow consumer; a permission the server denied) were
	// silent without a handler: the log names the subscription and what
	// it held, so that a reader that lost messages is found.
	nc.SetErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
		if sub == nil {
			slog.Warn("NATS reported an error", "err", err)
			return
		}
		msgs, bytes, _ := sub.Pending()
		slog.Warn("NATS reported an error on a subscription", "subject", sub.Subject, "pending_messages", msgs, "pending_bytes", bytes, "err", err)
	})
	nc.SetReconnectHandler(func(c *nats.Conn) {
		s.maxPayload.Store(c.MaxPayload())
		s.up.Store(c.IsConnected())
	})
	s.maxPayload.Store(nc.MaxPayload())
	s.up.Store(nc.IsConnected())
}

// Connected reports whether the connection to NATS is up, as of its last
// status callback. A publish made just after a disconnect that this has
// not seen yet fails by itself (publishes are not buffered while
// reconnecting).
func (b *Broker) Connected() bool { return b.conn.up.Load() }

// MaxPayload is the largest message the NATS server takes, as of the
// last (re)connect.
func (b *Broker) MaxPayload() int64 { return b.conn.maxPayload.Load() }
