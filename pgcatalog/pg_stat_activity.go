package pgcatalog

import (
	"time"

	"streamdb/types"
)

// pg_stat_activity: the client sessions (Engine.Backends) as
// PostgreSQL's statistics collector shows them. application_name is the
// one the client connected with (a later SET changes only what SHOW
// says in that session).

func timeOrNull(t time.Time) types.Datum {
	if t.IsZero() {
		return types.Null
	}
	return types.NewTime(t)
}

func init() {
	register("pg_catalog.pg_stat_activity", cols("datid", types.Int8, "datname", types.Text, "pid", types.Int4, "leader_pid", types.Int4,
		"usesysid", types.Int8, "usename", types.Text, "application_name", types.Text,
		"client_addr", types.Text, "client_hostname", types.Text, "client_port", types.Int4,
		"backend_start", types.Timestamptz, "xact_start", types.Timestamptz,
		"query_start", types.Timestamptz, "state_change", types.Timestamptz,
		"wait_event_type", types.Text, "wait_event", types.Text, "state", types.Text,
		"backend_xid", types.Int8, "backend_xmin", types.Int8, "query_id", types.Int8,
		"query", types.Text, "backend_type", types.Text),
		func(e Engine) []types.Row {
			roles := map[string]int64{}
			for _, r := range e.Roles() {
				roles[r.Name] = r.OID
			}
			var out []types.Row
			for _, be := range e.Backends() {
				addr := types.Null
				if be.ClientAddr != "" {
					addr = str(be.ClientAddr)
				}
				usesysid := types.Null
				if oid, ok := roles[be.User]; ok {
					usesysid = intD(oid)
				}
				out = append(out, types.Row{intD(DatabaseOID), str(be.Database), intD(be.PID), types.Null,
					usesysid, str(be.User), str(be.AppName), addr, types.Null, intD(be.ClientPort),
					types.NewTime(be.Started), types.Null, timeOrNull(be.QueryStart), timeOrNull(be.StateChange),
					types.Null, types.Null, str(be.State), types.Null, types.Null, types.Null,
					str(be.Query), str("client backend")})
			}
			return out
		})
}
