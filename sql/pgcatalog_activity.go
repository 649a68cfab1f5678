package sql

import (
	"net"
	"sort"
	"sync"
	"time"

	"streamdb/pgwire"
	"streamdb/types"
)

// pg_stat_activity, pg_backend_pid(), pg_cancel_backend(pid) and
// pg_terminate_backend(pid): the client sessions as PostgreSQL's
// statistics collector shows them. Each session registers its
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

func timeOrNull(t time.Time) types.Datum {
	if t.IsZero() {
		return types.Null
	}
	return types.NewTime(t)
}

func init() {
	pgSystemTables["pg_catalog.pg_stat_activity"] = pgSystemTableDef{
		cols: cols("datid", types.Int8, "datname", types.Text, "pid", types.Int4, "leader_pid", types.Int4,
			"usesysid", types.Int8, "usename", types.Text, "application_name", types.Text,
			"client_addr", types.Text, "client_hostname", types.Text, "client_port", types.Int4,
			"backend_start", types.Timestamptz, "xact_start", types.Timestamptz,
			"query_start", types.Timestamptz, "state_change", types.Timestamptz,
			"wait_event_type", types.Text, "wait_event", types.Text, "state", types.Text,
			"backend_xid", types.Int8, "backend_xmin", types.Int8, "query_id", types.Int8,
			"query", types.Text, "backend_type", types.Text),
		rows: func(e *Engine) []types.Row {
			roles := map[string]int64{}
			for _, r := range e.roleRows() {
				roles[r.name] = r.oid
			}
			var out []types.Row
			for _, be := range e.backends.entries() {
				st := be.b.State()
				addr, port := types.Null, intD(-1)
				if tcp, ok := be.b.ClientAddr.(*net.TCPAddr); ok {
					addr, port = str(tcp.IP.String()), intD(int64(tcp.Port))
				}
				usesysid := types.Null
				if oid, ok := roles[be.user]; ok {
					usesysid = intD(oid)
				}
				out = append(out, types.Row{intD(databaseOID), str(be.db), intD(int64(be.b.PID)), types.Null,
					usesysid, str(be.user), str(be.appName), addr, types.Null, port,
					types.NewTime(be.b.Started), types.Null, timeOrNull(st.QueryStart), timeOrNull(st.StateChange),
					types.Null, types.Null, str(st.State), types.Null, types.Null, types.Null,
					str(st.Query), str("client backend")})
			}
			return out
		},
	}
}
