package pgcatalog

// Engine is what the catalog relations of this package read of the
// engine: package sql implements it over its catalog. It grows as
// relations move here from sql; it stays free of sql's, storage's and
// the node's types.
type Engine interface {
	// Sequences lists the sequences.
	Sequences() []Sequence
	// OwnedSequences lists the sequences owned by a table column.
	OwnedSequences() []OwnedSequence
	// Views lists the views, plain and materialized.
	Views() []View
	// DefaultSequences lists the column defaults that call nextval.
	DefaultSequences() []DefaultSequence
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
	OID int64
	// Type is the sequence's data type: "smallint", "integer" or
	// "bigint".
	Type                              string
	Start, Increment, Max, Min, Cache int64
	Cycle                             bool
}
