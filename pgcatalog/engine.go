package pgcatalog

import (
	"time"

	"streamdb/types"
)

// Engine is all this package reads of the engine: package sql implements
// it (sql/pgcatalog_engine.go). It stays free of sql's, storage's,
// pgwire's and the node's types: each method returns plain values, copies
// the caller may keep.
type Engine interface {
	// Relations lists the user relations (streams, tables, views and
	// materialized views), by name. It reads the catalog under its read
	// lock and returns copies.
	Relations() []Relation
	// Sequences lists the sequences, by name, read as Relations.
	Sequences() []Sequence
	// SequenceLastValue is the last value nextval gave of the sequence
	// with that OID; false when it gave none or its record could not be
	// read within a few seconds. It takes the sequence's own lock, not
	// the catalog's.
	SequenceLastValue(oid int64) (int64, bool)
	// OwnedSequences lists the sequences owned by a table column, by
	// table name, read under the catalog's read lock.
	OwnedSequences() []OwnedSequence
	// Views lists the views, plain and materialized, by name, read
	// under the catalog's read lock.
	Views() []View
	// DefaultSequences lists the column defaults that call nextval, by
	// table name, read under the catalog's read lock.
	DefaultSequences() []DefaultSequence
	// Roles lists the bootstrap superuser and every created role, by
	// name, read under the role store's read lock.
	Roles() []Role
	// Backends lists the sessions of live client connections, by pid
	// (pg_stat_activity); it takes the registry of sessions' lock.
	Backends() []Backend
	// Setting is the server setting key's value (a key of
	// config.Settings) and whether a change of it takes a restart; it
	// reads the node's settings under their lock.
	Setting(key string) (value string, restart bool)
	// SessionDefaults are the session parameters with their defaults
	// (pg_settings lists them; SHOW gives a session's own value). The
	// map is fixed when the program starts; it takes no lock.
	SessionDefaults() map[string]string
	// EngineTables lists the system tables the engine computes itself
	// (streamdb_streams, ...), by qualified name, with their columns:
	// pg_class and pg_attribute list them beside this package's. The
	// list is fixed when the program starts; it takes no lock.
	EngineTables() map[string][]types.Column
}

// OwnedSequence is a sequence owned by a table column.
type OwnedSequence struct {
	OID, TableOID int64
	Column        int64 // the column's number (attnum)
	Identity      bool  // the sequence of an identity column
}

// View is a plain or materialized view.
type View struct {
	OID   int64
	Reads []int64 // the OIDs of the relations its query reads
}

// DefaultSequence is a column default that calls nextval of a sequence.
type DefaultSequence struct {
	AttrdefOID, SequenceOID int64
}

// Sequence is a sequence as pg_sequence describes it.
type Sequence struct {
	// OID is the sequence's pg_class OID.
	OID   int64
	Name  string
	Owner string // the role that owns it
	// Grants are the privileges granted on it, as Relation.Grants.
	Grants map[string][]string
	// GrantOrder is the grantees in the order they were first granted
	// something; ACLSet is whether a GRANT or REVOKE ran on it (its
	// relacl is NULL until then).
	GrantOrder []string
	ACLSet     bool
	// Type is the sequence's data type: "smallint", "integer" or
	// "bigint".
	Type                              string
	Start, Increment, Max, Min, Cache int64
	Cycle                             bool
}

// Role is a role as pg_roles shows it.
type Role struct {
	OID                        int64
	Name                       string
	Superuser, Login, Password bool // Password: it has one
}

// Backend is one client session with a live connection.
type Backend struct {
	PID                     int64
	User, Database, AppName string // AppName: the one it connected with
	// ClientAddr and ClientPort are the client's TCP address ("" and
	// -1 for another kind of connection).
	ClientAddr              string
	ClientPort              int64
	Started                 time.Time
	QueryStart, StateChange time.Time // zero when unknown
	State, Query            string
}
