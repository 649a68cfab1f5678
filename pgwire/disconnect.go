package pgwire

import (
	"context"
	"sync"
	"syscall"
	"time"

	"streamdb/sqlerr"
)

// disconnectCheckInterval is how often a running statement looks at its
// client's socket for a hang-up (PostgreSQL's
// client_connection_check_interval, which streamdb always has on).
const disconnectCheckInterval = 100 * time.Millisecond

// errDisconnected is the cause of a statement context cancelled because
// its client went away; nobody reads the error, the connection then ends.
var errDisconnected = &sqlerr.Error{Code: sqlerr.QueryCanceled, Message: "canceling statement because the client disconnected"}

// watchDisconnect cancels a statement with errDisconnected as soon as the
// client hangs up, until the returned stop is called. It only polls the
// socket for a hang-up and never reads from it, so that messages a client
// pipelines behind the running statement stay where the connection reads
// them. It is a timer, not a goroutine: most statements end before the
// first look, and then it costs no more than arming and stopping it.
func (c *conn) watchDisconnect(cancel context.CancelCauseFunc) (stop func()) {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return func() {}
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	t = time.AfterFunc(disconnectCheckInterval, func() {
		if peerClosed(raw) {
			c.log.Info("pgwire: client disconnected during a statement; cancelling it")
			cancel(errDisconnected)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			t.Reset(disconnectCheckInterval)
		}
	})
	return func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		t.Stop()
	}
}
