package admin

import (
	"net"
	"net/http"
	"sync"
)

// The HTTP endpoint holds at most a fixed number of connections at once,
// so that clients (idle keep-alive connections above all) cannot take the
// file descriptors the rest of the server needs: the PostgreSQL port,
// Pebble's and JetStream's files. JetStream in particular keeps a write
// error for good: a stream that could not open a file refuses every later
// write until the server restarts.
//
// A connection beyond the cap is accepted (so one descriptor more at
// most) and then waits for room: Accept closes an idle keep-alive
// connection to make it (its client opens a new one when it needs it),
// or, with none idle, waits until a connection closes or turns idle.
// Connections that are not idle end by the server's timeouts
// (ReadHeaderTimeout, ReadTimeout, IdleTimeout).

// limitListener holds at most cap(slots) connections at once.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	close sync.Once

	mu   sync.Mutex
	idle map[net.Conn]struct{} // connections waiting for their next request
	// idled is signalled when a connection turns idle.
	idled chan struct{}
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{}),
		idle: map[net.Conn]struct{}{}, idled: make(chan struct{}, 1)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		select {
		case l.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
		}
		if l.closeIdle() {
			continue
		}
		select {
		case l.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		case <-l.idled:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

func (l *limitListener) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// connState is the http.Server's ConnState hook: it tracks which
// connections are idle.
func (l *limitListener) connState(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st != http.StateIdle {
		delete(l.idle, c)
		return
	}
	l.idle[c] = struct{}{}
	select {
	case l.idled <- struct{}{}:
	default:
	}
}

// closeIdle closes one idle connection, which gives its slot back, and
// reports whether there was one.
func (l *limitListener) closeIdle() bool {
	l.mu.Lock()
	var victim net.Conn
	for c := range l.idle {
		victim = c
		delete(l.idle, c)
		break
	}
	l.mu.Unlock()
	if victim == nil {
		return false
	}
	victim.Close()
	return true
}

// limitConn gives its slot back once, on its first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
