package front

import "streamdb/sqlerr"

// plainCallAggregates are the aggregates the TiDB parser reads as plain
// function calls, under the names the earlier passes give them: it takes
// no DISTINCT or ALL in their arguments.
var plainCallAggregates = setOf("string_agg", "array_agg", "jsonb_agg", "json_agg", "jsonb_object_agg",
	"json_object_agg", "bool_and", "bool_or", "every", StddevFunc, VarianceFunc)

// aggDistinctPass rewrites DISTINCT and ALL in the calls of
// plainCallAggregates:
//
//	string_agg(DISTINCT a, ',', 'asc', a)  ->  string_agg(streamdb_agg_distinct(a), ',', 'asc', a)
//	array_agg(ALL a)                       ->  array_agg(a)
//
// It runs after orderedAggPass and funcPass, so the ORDER BY and FILTER
// of the call are arguments by then and the first argument is the one
// DISTINCT applies to (PostgreSQL's DISTINCT takes every argument, and
// the others are constants or, for the object aggregates, part of the
// pair the binder makes of the first two). A call followed by OVER is
// left alone: DISTINCT is not implemented for window functions.
func (r *rewriter) aggDistinctPass() error {
	if !hasWord(r.toks, "distinct") && !hasWord(r.toks, "all") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+2)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		out = append(out, t)
		if !(t.kind == tkWord && plainCallAggregates[t.val]) || i+2 >= len(r.toks) || !r.toks[i+1].isOp("(") || !r.toks[i+2].isWord("distinct", "all") {
			continue
		}
		end := matchParen(r.toks, i+1)
		if end < 0 {
			continue
		}
		if end+1 < len(r.toks) && r.toks[end+1].isWord("over") && r.toks[i+2].isWord("distinct") {
			return errorAt(r.src, t, sqlerr.FeatureNotSupported, "DISTINCT is not implemented for window functions")
		}
		first := splitTopLevel(r.toks[i+3 : end])[0]
		if len(first) == 0 {
			return syntaxError(r.src, r.toks[i+3])
		}
		out = append(out, r.toks[i+1])
		if r.toks[i+2].isWord("all") {
			out = append(out, withSpace(first, false)...)
		} else {
			out = append(out, synth(tkWord, AggDistinctFunc, r.toks[i+2], false), synth(tkOp, "(", r.toks[i+2], false))
			out = append(out, withSpace(first, false)...)
			out = append(out, synth(tkOp, ")", r.toks[i+2], false))
		}
		i += 2 + len(first) // the rest of the call is copied as it is
	}
	r.toks = out
	return nil
}
