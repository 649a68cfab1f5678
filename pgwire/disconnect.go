package pgwire

import (
	"context"
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

// watchDisconnect cancels ctx's statement with errDisconnected as soon as
// the client hangs up, until stop is closed. It only polls the socket for a
// hang-up and never reads from it, so that messages a client pipelines
// behind the running statement stay where the connection reads them.
func (c *conn) watchDisconnect(cancel context.CancelCauseFunc, stop <-chan struct{}) {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	t := time.NewTicker(disconnectCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if peerClosed(raw) {
			c.log.Info("pgwire: client disconnected during a statement; cancelling it")
			cancel(errDisconnected)
			return
		}
	}
}
