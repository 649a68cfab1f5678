package front

import "streamdb/expr"

// Names the rewrites put into queries, for the binder to recognise.
const (
	// CastFunc is the call that stands for expr::type and CAST(expr AS
	// type): streamdb_cast(expr, 'type name').
	CastFunc = "streamdb_cast"
	// IntervalFunc is the call that stands for an INTERVAL literal:
	// streamdb_interval('1 hour').
	IntervalFunc = "streamdb_interval"
	// FullJoinFunc is the call that marks a LEFT JOIN as a FULL OUTER JOIN
	// when it is the first conjunct of the ON condition:
	// a LEFT JOIN b ON streamdb_full_join() AND (cond).
	FullJoinFunc = "streamdb_full_join"
	// UsingJoinFunc and NaturalJoinFunc follow FullJoinFunc for a FULL
	// JOIN ... USING (x, y) and a NATURAL FULL JOIN:
	// a LEFT JOIN b ON streamdb_full_join() AND streamdb_using(x, y).
	UsingJoinFunc = "streamdb_using"
	// UsingAliasTable qualifies the last name of a USING list that stands
	// for the join's alias: USING (x) AS j is USING (x, streamdb_using_as.j).
	UsingAliasTable = "streamdb_using_as"
	// RegexpICaseFunc wraps the pattern of a ~* b (a REGEXP
	// streamdb_regexp_icase(b)): the match ignores case.
	RegexpICaseFunc = "streamdb_regexp_icase"
	NaturalJoinFunc = "streamdb_natural"
	// WindowTablePrefix begins the generated table names that stand for
	// TUMBLE and HOP calls (streamdb_window_1, ...); see Statement.Windows.
	WindowTablePrefix = "streamdb_window_"

	// ArrayFunc, SubscriptFunc, AnyFunc and ExtractFunc are evaluated by
	// package expr, which owns their names.
	ArrayFunc     = expr.ArrayFunc
	SubscriptFunc = expr.SubscriptFunc
	AnyFunc       = expr.AnyFunc
	ExtractFunc   = expr.ExtractFunc
	// CardinalityFunc stands for cardinality(), whose name the TiDB
	// parser reads as a keyword.
	CardinalityFunc = expr.CardinalityFunc
	// ContainsFunc, ContainedFunc and OverlapFunc stand for the array
	// operators @>, <@ and &&.
	ContainsFunc  = expr.ContainsFunc
	ContainedFunc = expr.ContainedFunc
	OverlapFunc   = expr.OverlapFunc
	// SequenceFuncPrefix is put before nextval, currval, setval and
	// lastval, which the TiDB parser reads with its own sequence syntax.
	SequenceFuncPrefix = "streamdb_seq_"
	// ModeFunc stands for mode(), whose name the TiDB parser reads as a
	// keyword.
	ModeFunc = "streamdb_mode"
	// RowsFromFunc stands for a set-returning function call, or ROWS
	// FROM (...), in FROM: see rewrite_series.go for its arguments.
	RowsFromFunc = "streamdb_rows_from"
	// ConcatFunc stands for PostgreSQL's concat().
	ConcatFunc = "streamdb_concat"
	// StddevFunc and VarianceFunc stand for the aggregates stddev(x) and
	// variance(x), which the TiDB parser reads with MySQL's (population)
	// meaning; PostgreSQL's are the sample forms.
	StddevFunc   = "streamdb_stddev"
	VarianceFunc = "streamdb_variance"
	// NoColumnsFunc stands in for an empty select list (SELECT FROM t):
	// the binder drops the field, leaving a query of no columns.
	NoColumnsFunc = "streamdb_no_columns"
	// MultiAssignFunc(i, n, (SELECT ...)) stands for column i (1-based)
	// of a subquery that must return n columns: UPDATE's SET (a, b) =
	// (SELECT ...), one assignment per column (update_from.go).
	MultiAssignFunc = "streamdb_multiassign"
	// AggFilterFunc is the first argument of array_agg and jsonb_agg
	// under FILTER (WHERE cond), as AggFilterFunc(cond, argument): those
	// keep NULLs, so the CASE WHEN cond THEN argument END that FILTER is
	// for the others would add a NULL for each row filtered out.
	AggFilterFunc = "streamdb_agg_filter"
	// AggDistinctFunc wraps the first argument of an aggregate called
	// with DISTINCT that the TiDB parser reads as a plain function
	// (string_agg(DISTINCT a, ',') is string_agg(AggDistinctFunc(a),
	// ',')); the binder makes the call a DISTINCT aggregate.
	AggDistinctFunc = "streamdb_agg_distinct"
	// DistinctOnFunc is the first field of a SELECT DISTINCT ON (...):
	// its arguments are the DISTINCT ON expressions, and the binder takes
	// it out of the select list.
	DistinctOnFunc = "streamdb_distinct_on"
	// WindowArgsFunc holds the arguments of lag and lead, whose offset
	// the TiDB parser reads as an unsigned number only:
	// lag(WindowArgsFunc(v, offset, default)) OVER (...).
	WindowArgsFunc = "streamdb_window_args"
)
