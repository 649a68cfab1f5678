package catalog

import "streamdb/sqlerr"

// FormatVersion names a format of the state a view keeps: how its
// dataflow is built from its plan, and so how its operators' state and
// source positions are numbered and encoded. The formats are the
// Dataflow* constants, in the way Pebble's FormatMajorVersion
// names its formats: each has a number that is stored, this binary reads
// the formats from DataflowMinSupported to DataflowLatest, and refuses
// any other (CheckFormat) instead of misreading it. A view of a format
// from DataflowMigratesFrom on is first moved forward at start, as far as
// its state allows (exec.MigrateView): formats older than
// DataflowMinSupported are read only that way, their exec branches gone.
//
// A view records its format in its descriptor; the data directory records
// the newest format any view in it was created with (RatchetFormat), so
// that a binary too old for a directory refuses it as a whole.
type FormatVersion int

// The formats of a view's dataflow (Descriptor.Dataflow), oldest first.
// Each keeps every rule of the formats before it and adds one (hence
// "also" below); exec tests a rule with dataflow >= the format that
// introduced it. A view moves to a newer format only through the steps
// that leave its state as it is or whose migration rewrites it exactly,
// at start (exec.MigrateView). The numbers are
// stored, so a new format goes at the end (TestFormatNumbers pins them).
const (
	// DataflowOneReaderPerScan gives every stream scan of a view its own
	// JetStream reader.
	DataflowOneReaderPerScan FormatVersion = iota
	// DataflowSharedScans gives a view one reader per stream it scans
	// (scans with a WATERMARK keep their own until
	// DataflowSharedWatermarkScans); the rows fan out to every scan of the
	// stream.
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
	// DataflowSharedWatermarkScans also shares the reader of a stream with
	// a WATERMARK among the view's scans of it: one watermark operator,
	// and one watermark, after the shared reader, before its rows fan
	// out; subplans over such scans are shared too.
	DataflowSharedWatermarkScans
	// DataflowIntervalSpans also keys state by interval spans, as
	// PostgreSQL compares intervals ('1 day' = '24:00:00', a month is 30
	// days; keyenc.AppendCmp): group keys of aggregates and DISTINCT, join
	// keys, top-N partitions and sort keys, min and max values, DISTINCT
	// arguments of aggregates. An aggregate's group keeps the key values
	// of the row that created it in its state, which it shows. Older
	// views keep keying intervals by months, days and microseconds.
	DataflowIntervalSpans
	// DataflowVNodeKeys also puts a vnode in every key of the state
	// tables of aggregates (their groups, and the values of their min and
	// max) and top-Ns: the key is the table's prefix, then the vnode in
	// two bytes big-endian, then the key as before. The vnode is FNV-1a
	// (32 bits) of the encoding of the table's distribution key (an
	// aggregate's group key, a top-N's partition key), modulo the view's
	// vnode count (Descriptor.VNodes, DefaultVNodes), so that one range
	// of vnodes of one table is one contiguous span of keys, which a
	// later step moves between servers without rewriting it
	// (storage.VNodeSpan). The hash and the layout are stored, so they
	// never change.
	DataflowVNodeKeys
	// DataflowJoinVNodes also puts a vnode in every key of a join's
	// state: the table's prefix, the side, the vnode of the join key (as
	// DataflowVNodeKeys computes it, over the join key's encoding), then
	// the key as before. A join key's rows on both sides have one vnode,
	// and one range of vnodes of one side is one contiguous span.
	DataflowJoinVNodes
	// DataflowViewRowVNodes also puts a vnode in every key of a
	// materialized view's rows: the table's prefix, the vnode of the key
	// the row is stored by (its unique key's encoding, its row id, or the
	// row's encoding: what followed the prefix before), then that key. An
	// index entry keeps pointing to its row by that whole key (vnode and
	// key) after its indexed values. Tables' rows carry no vnode.
	DataflowViewRowVNodes

	// -- add new formats above this line --

	dataflowEnd
	// DataflowLatest is the format of views created now: the newest.
	DataflowLatest = dataflowEnd - 1
	// DataflowMinSupported is the oldest format this binary builds
	// dataflows of; a view of an older one that the steps at start do not
	// move to it or past it is refused (CheckFormat).
	DataflowMinSupported = DataflowJoinStateByKey
	// DataflowMigratesFrom is the oldest format a view moves forward from
	// at start (exec.MigrateView); a view of an older one is refused
	// before anything is moved (CheckMigratable).
	DataflowMigratesFrom = DataflowOneReaderPerScan
)

// CheckFormat refuses a format this binary cannot read; what names the
// holder of the state (a view, a data directory) for the message.
func CheckFormat(what string, v FormatVersion) error {
	return checkFormatIn(what, v, DataflowMinSupported, DataflowLatest)
}

// CheckMigratable refuses a format this binary can neither read nor move
// forward to one it reads: the check made before views are moved.
func CheckMigratable(what string, v FormatVersion) error {
	return checkFormatIn(what, v, DataflowMigratesFrom, DataflowLatest)
}

func checkFormatIn(what string, v, minV, maxV FormatVersion) error {
	switch {
	case v > maxV:
		return sqlerr.New(sqlerr.FeatureNotSupported,
			"%s holds state in format %d, newer than this streamdb reads (formats %d to %d)", what, v, minV, maxV).
			WithHint("Start it with the streamdb release that wrote it, or a newer one.")
	case v < minV:
		return sqlerr.New(sqlerr.FeatureNotSupported,
			"%s holds state in format %d, older than this streamdb reads (formats %d to %d)", what, v, minV, maxV).
			WithHint("Open it with a streamdb release that reads format %d, and recreate the view there (DROP and CREATE MATERIALIZED VIEW): views created by it use a format this release reads.", v)
	}
	return nil
}
