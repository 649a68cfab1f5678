package expr

// Names of the internal calls that sql/front writes into queries for forms
// the TiDB parser does not read, and that Call evaluates. sql/front's names
// for them are these constants, so the rewrite and the evaluator cannot
// disagree.
const (
	// ArrayFunc(a, b, ...) stands for ARRAY[a, b, ...].
	ArrayFunc = "streamdb_array"
	// SubscriptFunc(x, i) stands for x[i].
	SubscriptFunc = "streamdb_subscript"
	// AnyFunc(x, 'op', 'any'|'all', array) stands for x op ANY (array) and
	// x op ALL (array).
	AnyFunc = "streamdb_any"
	// ExtractFunc(field, x) stands for EXTRACT(field FROM x).
	ExtractFunc = "streamdb_extract"
)
