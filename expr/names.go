package expr

// Names of the internal calls that front writes into queries for forms
// the TiDB parser does not read, and that Call evaluates. front's names
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
	// CardinalityFunc(x) stands for cardinality(x), whose name the TiDB
	// parser reads as a keyword.
	CardinalityFunc = "streamdb_cardinality"
	// ExtractFunc(field, x) stands for EXTRACT(field FROM x).
	ExtractFunc = "streamdb_extract"
	// ContainsFunc, ContainedFunc and OverlapFunc (a, b) stand for the
	// array operators a @> b, a <@ b and a && b.
	ContainsFunc  = "streamdb_contains"
	ContainedFunc = "streamdb_contained"
	OverlapFunc   = "streamdb_overlap"
)

// arrayOperatorFuncs are PostgreSQL's functions behind the array
// operators' calls.
var arrayOperatorFuncs = map[string]string{
	ContainsFunc: "arraycontains", ContainedFunc: "arraycontained", OverlapFunc: "arrayoverlap",
}

// arrayOperators are the operators of the functions in arrayOperatorFuncs.
var arrayOperators = map[string]string{"arraycontains": "@>", "arraycontained": "<@", "arrayoverlap": "&&"}
