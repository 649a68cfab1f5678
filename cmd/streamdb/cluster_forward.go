package main

import (
	"log/slog"
	"net"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/ha"
	"streamdb/pgwire"
)

// memberForwarder serves the PostgreSQL port of a --cluster member that
// does not hold the cluster's lease: every session is relayed to the
// coordinator the lease names (pgwire.Forwarder, which says how TLS,
// authentication and address rules work through it). It never forwards
// to this server's own address (a lease entry left by this server's
// earlier process), and refuses with 57P03 while no coordinator is known
// and once this server takes over.
type memberForwarder struct {
	fw       *pgwire.Forwarder
	starting atomic.Bool
}

// forwardSessions starts forwarding the connections of ln. self is the
// address the lease names this server by; st.active the coordinator's.
func forwardSessions(ln net.Listener, sec pgwire.Security, st *haState, self string, log *slog.Logger) *memberForwarder {
	m := &memberForwarder{}
	m.fw = pgwire.NewForwarder(sec, func() (string, *pgproto3.ErrorResponse) {
		if m.starting.Load() {
			return "", ha.StartingUp()
		}
		active := st.active.Load().(string)
		if active == "" || active == self {
			return "", ha.Refusal("")
		}
		return active, nil
	}, log)
	m.fw.Serve(ln)
	return m
}

// ActiveChanged ends the sessions relayed to any other coordinator: the
// old one lost its lease (dead, paused or stepping down), and its
// sessions must end rather than hang.
func (m *memberForwarder) ActiveChanged(addr string) { m.fw.CutExcept(addr) }

// TakingOver refuses new sessions ("starting up") and ends the relayed
// ones: this server holds the lease now, so the server they run on has
// lost it.
func (m *memberForwarder) TakingOver() {
	m.starting.Store(true)
	m.fw.CutExcept("")
}

// Close stops forwarding (the engine is about to listen on the address).
func (m *memberForwarder) Close() error { return m.fw.Close() }
