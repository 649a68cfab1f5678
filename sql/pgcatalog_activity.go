package sql

import (
	"sort"
	"sync"

	"streamdb/pgwire"
)

// The client sessions that pg_stat_activity (pgcatalog) lists,
// pg_backend_pid(), pg_cancel_backend(pid) and pg_terminate_backend(pid)
// act on. Each session registers its
// connection's pgwire.Backend when the connection hands it over; an entry
// whose connection closed is dropped at the next read.
//
// application_name is the one the client connected with (a later SET
// changes only what SHOW says in that session).

// backendRegistry holds the live sessions' connections.
type backendRegistry struct {
	mu sync.Mutex
	m  map[*session]*backendEntry
}

type backendEntry struct {
	b                 *pgwire.Backend
	user, db, appName string
}

// SetBackend implements pgwire.BackendUser.
func (s *session) SetBackend(b *pgwire.Backend) {
	r := &s.e.backends
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[*session]*backendEntry{}
	}
	r.pruneLocked()
	r.m[s] = &backendEntry{b: b, user: s.user, db: s.databaseName(), appName: s.settings["application_name"]}
}

// pruneLocked drops the entries of closed connections.
func (r *backendRegistry) pruneLocked() {
	for s, e := range r.m {
		if e.b.State().Closed {
			delete(r.m, s)
		}
	}
}

// entries lists the live sessions by pid.
func (r *backendRegistry) entries() []*backendEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneLocked()
	out := make([]*backendEntry, 0, len(r.m))
	for _, e := range r.m {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].b.PID < out[j].b.PID })
	return out
}

// of returns the session's own entry, nil for a session without a client
// connection (the console, tests).
func (r *backendRegistry) of(s *session) *backendEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[s]
}

// byPID returns the live entry with the given pid.
func (r *backendRegistry) byPID(pid int64) *backendEntry {
	for _, e := range r.entries() {
		if int64(e.b.PID) == pid {
			return e
		}
	}
	return nil
}

// backendPID is pg_backend_pid(): the pid of BackendKeyData, 0 without a
// client connection.
func (s *session) backendPID() int64 {
	if e := s.e.backends.of(s); e != nil {
		return int64(e.b.PID)
	}
	return 0
}
