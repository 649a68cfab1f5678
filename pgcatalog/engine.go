package pgcatalog

// Engine is what the catalog relations of this package read of the
// engine: package sql implements it over its catalog. It grows as
// relations move here from sql; it stays free of sql's, storage's and
// the node's types.
type Engine interface {
	// Sequences lists the sequences.
	Sequences() []Sequence
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
