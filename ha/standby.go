package ha

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/sqlerr"
)

// A Standby answers PostgreSQL protocol connections while this server
// waits for the lease: every session is refused at startup with 57P03,
// naming the active server, before any query can run. 57P03 is
// PostgreSQL's answer from a server that is up but not accepting sessions;
// libpq and pgx given several hosts (host=a,b) try the next one on it, so
// clients find the active server of a group by listing all of its servers.
type Standby struct {
	ln       net.Listener
	active   func() string
	starting atomic.Bool
	wg       sync.WaitGroup
}

// TakingOver has the refusals say that this server holds the lease and is
// restoring the group's state: the client retries (or tries the next
// host) until it serves.
func (s *Standby) TakingOver() { s.starting.Store(true) }

// ServeStandby answers connections on ln until Close. active returns the
// host:port of the active server, or "" when none is known.
func ServeStandby(ln net.Listener, active func() string) *Standby {
	s := &Standby{ln: ln, active: active}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.refuse(c)
			}()
		}
	}()
	return s
}

// Close stops accepting and waits for the refusals under way.
func (s *Standby) Close() error {
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

// Refusal is the error a standby sends.
func Refusal(active string) *pgproto3.ErrorResponse {
	msg := "the database system is a standby; no server of its group is active yet"
	hint := "Retry shortly: a standby takes over once the active server's lease expires."
	if active != "" {
		msg = "the database system is a standby; the active server is " + active
		hint = fmt.Sprintf("Connect to %s, or list every server of the group in the connection string (host=a,b port=p,q) so the client finds the active one.", active)
	}
	return &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: sqlerr.CannotConnectNow, Message: msg, Hint: hint}
}

// StartingUp is the refusal of a server that is taking over.
func StartingUp() *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: sqlerr.CannotConnectNow,
		Message: "the database system is starting up: this server took over its group and is restoring the group's newest checkpoint",
		Hint:    "Retry shortly."}
}

func (s *Standby) refuse(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	be := pgproto3.NewBackend(c, c)
	for {
		m, err := be.ReceiveStartupMessage()
		if err != nil {
			return
		}
		switch m.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			// No encryption here: the client goes on in the clear (or,
			// with sslmode=require, gives up on this host and tries the
			// next).
			if _, err := c.Write([]byte{'N'}); err != nil {
				return
			}
			continue
		case *pgproto3.StartupMessage:
			if s.starting.Load() {
				be.Send(StartingUp())
			} else {
				be.Send(Refusal(s.active()))
			}
			be.Flush()
		}
		return
	}
}
