// Package catalog holds the descriptors of the catalog's objects
// (streams, tables, materialized views, views,
// sequences) and the formats of a view's
// dataflow: the types the binder, the planner, the runtime and the store
// all share. Storing descriptors is package storage's job; this package
// has no dependency on Pebble.
package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"streamdb/types"
)

// ObjectKind names the kinds of catalog objects.
type ObjectKind string

const (
	KindStream ObjectKind = "stream"
	KindTable  ObjectKind = "table"
	KindView   ObjectKind = "materialized view"
	// KindPlainView is a view of CREATE VIEW: it keeps only its query
	// (Query, Columns, DependsOn), no state and no dataflow, and is
	// expanded where a query reads it.
	KindPlainView ObjectKind = "view"
	KindSequence  ObjectKind = "sequence"
	// KindSource is a PostgreSQL database whose tables streamdb mirrors
	// through logical replication (Source); each mirrored table is a
	// table whose Mirror names the source.
	KindSource ObjectKind = "source"
	// KindSystem is a read-only table computed from server state
	// (streamdb_checkpoints); it is never stored.
	KindSystem ObjectKind = "system table"
	// KindUnpopulatedView is a materialized view created WITH NO DATA
	// and not refreshed since: it keeps its query (Query, Columns,
	// DependsOn, Options) and Indexes, no plan, state or dataflow, and
	// cannot be read. REFRESH MATERIALIZED VIEW makes it a KindView.
	KindUnpopulatedView ObjectKind = "unpopulated materialized view"
)

// Column is a persisted column: the type is stored by name so that the
// encoding survives reordering of types.Type constants.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// NotNull: a table's INSERT and UPDATE refuse NULL here (primary key
	// columns and NOT NULL columns).
	NotNull bool `json:"not_null,omitempty"`
	// Comment is COMMENT ON COLUMN's text ("" for none).
	Comment string `json:"comment,omitempty"`
	// Default is a table column's DEFAULT expression as SQL text (a
	// serial column's is nextval('<its sequence>'::regclass)); "" for
	// none.
	Default string `json:"default,omitempty"`
	// Identity is "a" (GENERATED ALWAYS AS IDENTITY) or "d" (BY DEFAULT)
	// for an identity column, whose values come from the sequence
	// IdentitySequence; "" otherwise.
	Identity         string `json:"identity,omitempty"`
	IdentitySequence string `json:"identity_sequence,omitempty"`
	// Key is the member name the column's values have in the JSON
	// messages of its stream or table changelog; "" means Name. RENAME
	// COLUMN keeps it, so that messages written before the rename (and a
	// stream's producers) are read under the new name.
	Key string `json:"key,omitempty"`
	// Missing, when set, is the column's value, as text, in a message
	// without its member: the default of ALTER ... ADD COLUMN, which rows
	// written before the column existed read (PostgreSQL's attmissingval).
	Missing *string `json:"missing,omitempty"`
	// Generated is the expression of a generated column (GENERATED
	// ALWAYS AS (expr) STORED) as SQL text over the relation's other
	// columns; "" for a column that is not generated. A stream computes
	// it as each message is decoded; a table as each row is written.
	Generated string `json:"generated,omitempty"`
	// Metadata, for a stream column of an INCLUDE clause, says what of
	// the message fills it (the MetaSubject... forms); "" for a column
	// read from the message's data.
	Metadata string `json:"metadata,omitempty"`
}

// MemberKey is the member name of the column's values in messages.
func (c Column) MemberKey() string {
	if c.Key != "" {
		return c.Key
	}
	return c.Name
}

// The forms of Column.Metadata: the subject, its token at a position (1
// the first, -1 the last), a header by name, the time JetStream stored
// the message and its stream sequence.
const (
	MetaSubject      = "subject"
	MetaTokenPrefix  = "subject_token:" // + position
	MetaHeaderPrefix = "header:"        // + name
	MetaTimestamp    = "timestamp"
	MetaSequence     = "sequence"
)

// OptWholeMessage is the stream option (WITH (whole_message = true))
// under which its one declared column, json or jsonb, takes each whole
// message; its value is "true" when set.
const OptWholeMessage = "whole_message"

// Descriptor is one catalog object as stored in Pebble.
type Descriptor struct {
	ID        uint32     `json:"id"`
	Name      string     `json:"name"`
	Kind      ObjectKind `json:"kind"`
	Columns   []Column   `json:"columns"`
	CreatedAt time.Time  `json:"created_at"`
	// Comment is COMMENT ON's text for the object ("" for none).
	Comment string `json:"comment,omitempty"`

	// Streams and tables.
	Subject  string            `json:"subject,omitempty"`
	JSStream string            `json:"js_stream,omitempty"`
	Format   string            `json:"format,omitempty"`
	Options  map[string]string `json:"options,omitempty"`
	// FormatSchema is, for a stream of format protobuf, the serialized
	// FileDescriptorSet its message type is in (Options["message"]); for
	// format avro, the Avro schema's JSON. It is read once, at CREATE,
	// so that the stream does not depend on the file it came from.
	FormatSchema []byte   `json:"format_schema,omitempty"`
	PrimaryKey   []string `json:"primary_key,omitempty"`
	Watermark    string   `json:"watermark,omitempty"`
	// StartSeq is, for a table, the JetStream sequence its changelog
	// starts after: messages up to it belong to an earlier table of the
	// same name and subject.
	StartSeq uint64 `json:"start_seq,omitempty"`
	// RetiredKeys are the member keys of a table's dropped columns: old
	// changelog messages still hold them, so no new column takes them.
	RetiredKeys []string `json:"retired_keys,omitempty"`
	// Constraints are a table's UNIQUE, CHECK and FOREIGN KEY
	// constraints (constraint.go).
	Constraints []Constraint `json:"constraints,omitempty"`

	// Views (materialized and plain): the defining query text and the
	// objects it reads by name.
	Query string `json:"query,omitempty"`
	// QueryColumnNames, for a plain view, holds the names its Query
	// uses for the columns of the tables it reads that were renamed
	// since: table id -> member key -> the name in Query. The view is
	// bound seeing those tables' columns under those names, so its text
	// stays as written (binder/plain_view_names.go).
	QueryColumnNames map[uint32]map[string]string `json:"query_column_names,omitempty"`
	DependsOn        []string                     `json:"depends_on,omitempty"`
	// Dataflow is the format of a view's dataflow, fixed when the view is
	// created: its source positions and operator state are numbered and
	// encoded by it, so a view keeps the format it was created with.
	Dataflow FormatVersion `json:"dataflow,omitempty"`
	// VNodes is the count of vnodes a view's state keys are hashed into
	// (StateVNodes), fixed when the view is created or moved to
	// DataflowVNodeKeys: a key's vnode, and so its place, depends on it.
	VNodes uint16 `json:"vnodes,omitempty"`
	// Plan is the record of the plan a view was created with (package
	// plan's Encode), which its dataflow is built from; empty for views
	// created before plans were recorded, which bind Query again.
	Plan json.RawMessage `json:"plan,omitempty"`
	// OpState is a view's state layout: the indexes of its operators'
	// state tables by operator id (package plan's NodeIDs over its
	// streaming plan; exec.StateSlots), in the order each operator takes
	// them. It is recorded at CREATE, rewritten by ALTER MATERIALIZED
	// VIEW (the operators that keep their state keep their tables), and
	// recorded at start for a view created before layouts were
	// (exec.RecordStateLayout). NextOp is the first table index no
	// operator of the view used yet; 0 only for a view whose layout is
	// not recorded.
	OpState map[string][]uint16 `json:"op_state,omitempty"`
	NextOp  uint16              `json:"next_op,omitempty"`

	// Sequence holds a sequence's definition.
	Sequence *Sequence `json:"sequence,omitempty"`

	// Source holds a source's definition. Mirror is, for a table, the
	// source it mirrors: only that source's changes write it.
	Source *PGSource `json:"source,omitempty"`
	Mirror string    `json:"mirror,omitempty"`

	// Secret holds a secret's value (KindSecret).
	Secret *Secret `json:"secret,omitempty"`

	// Indexes are the secondary indexes (CREATE INDEX) of a table or
	// materialized view, kept by the object's dataflow in its own state.
	Indexes []Index `json:"indexes,omitempty"`
}

// PGSource is the definition of a PostgreSQL source.
type PGSource struct {
	// Connection is the libpq connection string (it may hold a
	// password: shown only redacted). ConnectionSecret, when set, names
	// the secret that holds the whole connection string instead, and
	// PasswordSecret the secret whose value is the password; both are
	// read each time the source connects.
	Connection       string `json:"connection"`
	ConnectionSecret string `json:"connection_secret,omitempty"`
	PasswordSecret   string `json:"password_secret,omitempty"`
	// SSLCASecret, SSLCertSecret and SSLKeySecret name the secrets that
	// hold, as PEM text, the certificate authority the source's server
	// certificate must chain to and the client certificate and key to
	// present; read each time the source connects. Empty: none (older
	// descriptors lack them).
	SSLCASecret   string `json:"ssl_ca_secret,omitempty"`
	SSLCertSecret string `json:"ssl_cert_secret,omitempty"`
	SSLKeySecret  string `json:"ssl_key_secret,omitempty"`
	Publication   string `json:"publication"`
	// Slot is the replication slot on the source; Progress the table
	// that records, in the same commits as the changes, the source
	// position applied.
	Slot     string `json:"slot"`
	Progress string `json:"progress"`
	// Tables maps each mirrored source table to its streamdb table.
	Tables []PGSourceTable `json:"tables"`
}

// Secrets lists the secrets the source reads when it connects, each
// once, in a fixed order.
func (s *PGSource) Secrets() []string {
	var out []string
	for _, name := range []string{s.ConnectionSecret, s.PasswordSecret, s.SSLCASecret, s.SSLCertSecret, s.SSLKeySecret} {
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// PGSourceTable is one mirrored table.
type PGSourceTable struct {
	Schema string `json:"schema"`
	Name   string `json:"name"`
	Table  string `json:"table"`
}

// Index is a secondary index of a table or materialized view. Its entries
// live in state table Table of the object (package exec): one key per
// stored row, the indexed columns' values then the row's key in the
// object's own state table.
type Index struct {
	Name    string        `json:"name"`
	Columns []IndexColumn `json:"columns"`
	Unique  bool          `json:"unique,omitempty"`
	// Table is the index's state table number within the object; distinct
	// among the object's indexes and never an operator's.
	Table uint16 `json:"table"`
	// Seq numbers the object's indexes from 1, distinct among them: the
	// catalogs derive the index's OID from it.
	Seq uint16 `json:"seq"`
	// Constraint marks the index that backs the table's UNIQUE
	// constraint of the same name, as PostgreSQL backs one with a unique
	// index: made and dropped with the constraint (never by CREATE or
	// DROP INDEX), and shown in the catalogs as the constraint's index.
	Constraint bool `json:"constraint,omitempty"`
}

// IndexColumn is one key column of an index with its declared order.
type IndexColumn struct {
	Name       string `json:"name"`
	Desc       bool   `json:"desc,omitempty"`
	NullsFirst bool   `json:"nulls_first,omitempty"`
}

// Sequence is the definition of a sequence. Its values are kept outside
// the catalog (package sql reserves them durably by Key), so that rolling
// the catalog back never hands a value out twice.
type Sequence struct {
	Type      string `json:"type"` // "smallint", "integer" or "bigint"
	Start     int64  `json:"start"`
	Increment int64  `json:"increment"`
	Min       int64  `json:"min"`
	Max       int64  `json:"max"`
	Cache     int64  `json:"cache"`
	Cycle     bool   `json:"cycle,omitempty"`
	// Key names the sequence's durable state; it is random, made once at
	// CREATE, so that a sequence created again under the same name (or
	// the same catalog id) starts afresh.
	Key string `json:"key"`
	// OwnedBy is the id and column of the table that owns the sequence
	// (a serial or identity column, or OWNED BY); a dropped table takes
	// its sequences with it. OwnedByTable 0 is none.
	OwnedByTable  uint32 `json:"owned_by_table,omitempty"`
	OwnedByColumn string `json:"owned_by_column,omitempty"`
}

// Schema returns the columns as types.Columns.
func (d *Descriptor) Schema() ([]types.Column, error) {
	out := make([]types.Column, len(d.Columns))
	for i, c := range d.Columns {
		t, mod, err := types.ParseWithModifier(c.Type)
		if err != nil {
			return nil, fmt.Errorf("catalog object %s column %s: %w", d.Name, c.Name, err)
		}
		out[i] = types.Column{Name: c.Name, Type: t, Mod: mod}
	}
	return out, nil
}

// MemberKeys returns the member keys of the columns (Column.MemberKey),
// or nil when every column's is its name.
func (d *Descriptor) MemberKeys() []string {
	renamed := false
	for _, c := range d.Columns {
		renamed = renamed || (c.Key != "" && c.Key != c.Name)
	}
	if !renamed {
		return nil
	}
	out := make([]string, len(d.Columns))
	for i, c := range d.Columns {
		out[i] = c.MemberKey()
	}
	return out
}

// ColumnsFrom converts types.Columns to persisted columns.
func ColumnsFrom(cols []types.Column) []Column {
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = Column{Name: c.Name, Type: types.TypeName(c.Type, c.Mod)}
	}
	return out
}
