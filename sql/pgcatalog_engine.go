package sql

import (
	"context"
	"net"
	"sort"

	"streamdb/catalog"
	"streamdb/meta"
	"streamdb/pgcatalog"
	"streamdb/types"
)

// The adapter through which package pgcatalog reads the engine
// (pgcatalog.Engine) and a session's role (pgcatalog.Reader).

// catalogEngine is the engine as package pgcatalog reads it. Each
// method reads the catalog under catMu's read lock (through objects and
// lookup) and returns copies.
type catalogEngine struct{ e *Engine }

// Relations implements pgcatalog.Engine.
func (c catalogEngine) Relations() []pgcatalog.Relation {
	var out []pgcatalog.Relation
	for _, kind := range pgcatalog.RelationKinds {
		for _, d := range c.e.objects(kind) {
			r := pgcatalog.RelationOf(d, c.e.roles.Owner(d))
			r.Grants = c.e.roles.Grants(d)
			r.GrantOrder, r.ACLSet = c.e.roles.GrantOrder(d)
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Sequences implements pgcatalog.Engine.
func (c catalogEngine) Sequences() []pgcatalog.Sequence {
	var out []pgcatalog.Sequence
	for _, d := range c.e.objects(catalog.KindSequence) {
		q := pgcatalog.SequenceOf(d, c.e.roles.Owner(d))
		q.Grants = c.e.roles.Grants(d)
		q.GrantOrder, q.ACLSet = c.e.roles.GrantOrder(d)
		out = append(out, q)
	}
	return out
}

// OwnedSequences implements pgcatalog.Engine.
func (c catalogEngine) OwnedSequences() []pgcatalog.OwnedSequence {
	var out []pgcatalog.OwnedSequence
	for _, t := range c.e.objects(catalog.KindTable) {
		for _, q := range c.e.ownedSequences(t) {
			out = append(out, pgcatalog.OwnedSequenceOf(t, q))
		}
	}
	return out
}

// SequenceLastValue implements pgcatalog.Engine.
func (c catalogEngine) SequenceLastValue(oid int64) (int64, bool) {
	for _, d := range c.e.objects(catalog.KindSequence) {
		if int64(firstUserOID+d.ID) != oid {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), infoSequenceTimeout)
		defer cancel()
		v, ok, err := c.e.lastValue(ctx, d)
		return v, err == nil && ok
	}
	return 0, false
}

// Roles implements pgcatalog.Engine.
func (c catalogEngine) Roles() []pgcatalog.Role { return c.e.roleRows() }

// roleRows lists the bootstrap superuser (PostgreSQL's OID 10) and every
// created role, by name.
func (e *Engine) roleRows() []pgcatalog.Role {
	rows := []pgcatalog.Role{{OID: 10, Name: BootstrapUser, Superuser: true, Login: true, Password: true}}
	for name, r := range e.roles.List() {
		rows = append(rows, pgcatalog.Role{OID: r.OID, Name: name, Superuser: r.Superuser, Login: r.Login, Password: r.SCRAM != ""})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows
}

// Backends implements pgcatalog.Engine.
func (c catalogEngine) Backends() []pgcatalog.Backend {
	var out []pgcatalog.Backend
	for _, be := range c.e.backends.entries() {
		st := be.b.State()
		b := pgcatalog.Backend{PID: int64(be.b.PID), User: be.user, Database: be.db, AppName: be.appName, ClientPort: -1,
			Started: be.b.Started, QueryStart: st.QueryStart, StateChange: st.StateChange, State: st.State, Query: st.Query}
		if tcp, ok := be.b.ClientAddr.(*net.TCPAddr); ok {
			b.ClientAddr, b.ClientPort = tcp.IP.String(), int64(tcp.Port)
		}
		out = append(out, b)
	}
	return out
}

// Setting implements pgcatalog.Engine.
func (c catalogEngine) Setting(key string) (string, bool) {
	return c.e.setting(key), meta.RestartSetting(key)
}

// SessionDefaults implements pgcatalog.Engine: defaultSessionSettings,
// which only init functions write.
func (catalogEngine) SessionDefaults() map[string]string { return defaultSessionSettings }

// Views implements pgcatalog.Engine: the views by name.
func (c catalogEngine) Views() []pgcatalog.View {
	var views []*catalog.Descriptor
	for _, kind := range []catalog.ObjectKind{catalog.KindView, catalog.KindPlainView} {
		views = append(views, c.e.objects(kind)...)
	}
	sort.Slice(views, func(i, j int) bool { return views[i].Name < views[j].Name })
	var out []pgcatalog.View
	for _, d := range views {
		out = append(out, pgcatalog.ViewOf(d, c.e.lookup))
	}
	return out
}

// DefaultSequences implements pgcatalog.Engine.
func (c catalogEngine) DefaultSequences() []pgcatalog.DefaultSequence {
	return pgcatalog.DefaultSequencesOf(c.Relations(), c.e.lookup)
}

// EngineTables implements pgcatalog.Engine: the streamdb_* tables of
// pgSystemTables. It reads no engine state, so the zero catalogEngine
// answers it too.
func (catalogEngine) EngineTables() map[string][]types.Column {
	out := make(map[string][]types.Column, len(pgSystemTables))
	for name, t := range pgSystemTables {
		out[name] = t.cols
	}
	return out
}

// catalogRole is a session's role (or noPrivileges) as package
// pgcatalog asks it.
type catalogRole struct {
	e *Engine
	r rowReader
}

// HoldsAny implements pgcatalog.Reader.
func (c catalogRole) HoldsAny(relation string, privs ...string) bool {
	d, _ := c.e.lookup(relation)
	return c.r.holdsAny(d, privs...)
}

// relationOID is the pg_class OID of the relation d names, the value of
// its system column tableoid: a user relation's or a system table's, 0
// for others (streamdb's own tables outside pg_catalog).
func relationOID(d *catalog.Descriptor) int64 {
	switch d.Kind {
	case catalog.KindStream, catalog.KindTable, catalog.KindView, catalog.KindUnpopulatedView, catalog.KindPlainView, catalog.KindSequence:
		return int64(firstUserOID + d.ID)
	case catalog.KindSystem:
		return pgcatalog.SystemRelationOID(catalogEngine{}, d.Name)
	}
	return 0
}

// pgRelations lists the user relations as pgcatalog describes them, by
// name.
func (e *Engine) pgRelations() []pgcatalog.Relation { return catalogEngine{e}.Relations() }
