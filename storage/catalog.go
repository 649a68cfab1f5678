package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/types"
)

// ObjectKind names the kinds of catalog objects.
type ObjectKind string

const (
	KindStream ObjectKind = "stream"
	KindTable  ObjectKind = "table"
	KindView   ObjectKind = "materialized view"
	// KindSystem is a read-only table computed from server state
	// (streamdb_checkpoints); it is never stored.
	KindSystem ObjectKind = "system table"
)

// Column is a persisted column: the type is stored by name so that the
// encoding survives reordering of types.Type constants.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// NotNull: a table's INSERT and UPDATE refuse NULL here (primary key
	// columns and NOT NULL columns).
	NotNull bool `json:"not_null,omitempty"`
}

// Descriptor is one catalog object as stored in Pebble.
type Descriptor struct {
	ID        uint32     `json:"id"`
	Name      string     `json:"name"`
	Kind      ObjectKind `json:"kind"`
	Columns   []Column   `json:"columns"`
	CreatedAt time.Time  `json:"created_at"`

	// Streams and tables.
	Subject    string            `json:"subject,omitempty"`
	JSStream   string            `json:"js_stream,omitempty"`
	Format     string            `json:"format,omitempty"`
	Options    map[string]string `json:"options,omitempty"`
	PrimaryKey []string          `json:"primary_key,omitempty"`
	Watermark  string            `json:"watermark,omitempty"`
	// StartSeq is, for a table, the JetStream sequence its changelog
	// starts after: messages up to it belong to an earlier table of the
	// same name and subject.
	StartSeq uint64 `json:"start_seq,omitempty"`

	// Views: the defining query text and the objects it reads.
	Query     string   `json:"query,omitempty"`
	DependsOn []string `json:"depends_on,omitempty"`
	// Dataflow is the format of a view's dataflow, fixed when the view is
	// created: its source positions and operator state are numbered and
	// encoded by it, so a view keeps the format it was created with.
	Dataflow FormatVersion `json:"dataflow,omitempty"`
	// Plan is the record of the plan a view was created with (package
	// plan's Encode), which its dataflow is built from; empty for views
	// created before plans were recorded, which bind Query again.
	Plan json.RawMessage `json:"plan,omitempty"`
	// OpState, set once a view was altered (ALTER MATERIALIZED VIEW),
	// numbers its operators' state tables by operator id (the ids of
	// package plan's NodeIDs over its streaming plan) instead of by the
	// walk of the plan: the operators that kept their state through the
	// change keep their tables. NextOp is the first table index no
	// operator of the view used yet.
	OpState map[string][]uint16 `json:"op_state,omitempty"`
	NextOp  uint16              `json:"next_op,omitempty"`
}

// The formats of a view's dataflow (Descriptor.Dataflow), oldest first.
// Each keeps every rule of the formats before it and adds one (hence
// "also" below); exec tests a rule with dataflow >= the format that
// introduced it. A view never changes format. The numbers are stored, so
// a new format goes at the end (TestFormatNumbers pins them).
const (
	// DataflowOneReaderPerScan gives every stream scan of a view its own
	// JetStream reader.
	DataflowOneReaderPerScan FormatVersion = iota
	// DataflowSharedScans gives a view one reader per stream it scans
	// (scans with a WATERMARK keep their own); the rows fan out to every
	// scan of the stream.
	DataflowSharedScans
	// DataflowSharedSubplans also computes each distinct subplan of
	// windows, filters, projections and aggregates over shared scans once
	// (two aggregates with the same groups and aggregates, in any order,
	// are one).
	DataflowSharedSubplans
	// DataflowAppendOnlyJoins also treats an inner join of append-only
	// inputs as append-only (its view keeps rows by row id, aggregates over
	// it use insert-only accumulators), and a join keeps each row once in
	// its state (in the key; the value holds only counts).
	DataflowAppendOnlyJoins
	// DataflowNarrowRows also drops the columns nothing reads
	// (plan.PruneColumns): projections compute only what is read above
	// them, and a join's inputs are narrowed to the columns read above it
	// or by its keys and condition, so its state and output rows are
	// narrower.
	DataflowNarrowRows
	// DataflowJoinStateByID also keys each join state entry by an id that
	// grows, not by its join key and row, so that the entries an epoch
	// adds sort after the older ones in Pebble.
	DataflowJoinStateByID
	// DataflowJoinStatePaged also stores the rows a join's append-only
	// input adds in an epoch together, in pages of a few KiB under one
	// key each (Pebble's cost is per key).
	DataflowJoinStatePaged
	// DataflowSumSpecials also keeps, in the state of sum() and avg() over
	// numeric and floating-point values, the counts of NaN, Infinity and
	// -Infinity inputs apart from the sum of the finite ones, so that the
	// result stays right when those inputs are retracted.
	DataflowSumSpecials
	// DataflowJoinStateByKey also keys a join's state pages by side and
	// join key, so that a key's rows are read back on a cache miss and a
	// join keeps only a bounded cache of its keys in memory.
	DataflowJoinStateByKey
	// DataflowViewEdges also reads the views and tables a view scans
	// through an edge from their pipelines (the changes their
	// materialize operators apply), not by running a view's dataflow
	// again or replaying a table's changelog; such scans have no source
	// position. A new view starts from a snapshot of their state at an
	// epoch, then their changes from the next one.
	DataflowViewEdges
	// DataflowTopNStateByKey also keys a top-N's state by partition and
	// rank order (the sort key values, descending ones complemented, then
	// the row), so that a partition's leading rows are a range scan and a
	// top-N over a retracting input keeps only a bounded cache of its rows
	// in memory.
	DataflowTopNStateByKey
	// DataflowExtremaByValue also keeps the values of min and max over a
	// retracting input in a second state table of their aggregate, one
	// key per distinct value in value order, instead of in the group's
	// state: a group holds only its current extreme in memory.
	DataflowExtremaByValue

	// -- add new formats above this line --

	dataflowEnd
	// DataflowLatest is the format of views created now: the newest.
	DataflowLatest = dataflowEnd - 1
	// DataflowMinSupported is the oldest format this binary reads; a view
	// or data directory of an older one is refused (CheckFormat).
	DataflowMinSupported = DataflowOneReaderPerScan
)

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

// ColumnsFrom converts types.Columns to persisted columns.
func ColumnsFrom(cols []types.Column) []Column {
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = Column{Name: c.Name, Type: types.TypeName(c.Type, c.Mod)}
	}
	return out
}

func catalogKey(name string) []byte { return append([]byte{prefixCatalog}, name...) }

// PutDescriptor writes d to the catalog in b.
func PutDescriptor(b *pebble.Batch, d *Descriptor) error {
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return b.Set(catalogKey(d.Name), v, nil)
}

// DeleteDescriptor removes the object named name from the catalog in b.
func DeleteDescriptor(b *pebble.Batch, name string) error {
	return b.Delete(catalogKey(name), nil)
}

// Descriptors returns every catalog object, ordered by name.
func Descriptors(r Reader) ([]*Descriptor, error) {
	var out []*Descriptor
	err := ScanPrefix(r, []byte{prefixCatalog}, func(_, v []byte) error {
		d := new(Descriptor)
		if err := json.Unmarshal(v, d); err != nil {
			return fmt.Errorf("decode catalog entry: %w", err)
		}
		out = append(out, d)
		return nil
	})
	return out, err
}

// NextObjectID allocates an object id, persisting the counter in b.
func (s *Store) NextObjectID(b *pebble.Batch) (uint32, error) {
	v, ok, err := s.Get(metaKey("next_id"))
	if err != nil {
		return 0, err
	}
	id := uint32(1)
	if ok {
		id = binary.BigEndian.Uint32(v)
	}
	return id, b.Set(metaKey("next_id"), binary.BigEndian.AppendUint32(nil, id+1), nil)
}

// DescriptorNamed returns the catalog object named name in r, or nil.
func DescriptorNamed(r Reader, name string) (*Descriptor, error) {
	key := catalogKey(name)
	var out *Descriptor
	err := ScanPrefix(r, key, func(k, v []byte) error {
		if len(k) != len(key) {
			return nil // a longer name with this one as its prefix
		}
		out = new(Descriptor)
		return json.Unmarshal(v, out)
	})
	return out, err
}
