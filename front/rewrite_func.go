package front

import "streamdb/sqlerr"

// funcPass rewrites function-call syntax the TiDB parser reads differently:
//
//	EXTRACT(field FROM x)              ->  streamdb_extract('field', x)
//	agg(args) FILTER (WHERE cond)      ->  agg(CASE WHEN cond THEN arg1 END, ...)
//	concat(args)                       ->  streamdb_concat(args)
//	stddev(x), variance(x)             ->  streamdb_stddev(x), streamdb_variance(x)
//	cardinality(x)                     ->  streamdb_cardinality(x)  (a TiDB keyword)
//	nextval(s), currval, setval, lastval  ->  streamdb_seq_nextval(s), ...  (TiDB
//	                                       reads its own sequence syntax there)
//
// The TiDB parser reads stddev and variance as MySQL's population
// aggregates; PostgreSQL's are the sample ones, which the binder gives
// these names (over a window, the TiDB names of the sample aggregates).
//
// The TiDB parser turns a || b into concat(a, b), so a call the user wrote
// as concat( must keep another name: PostgreSQL's concat() skips NULLs
// while || yields NULL.
//
// EXTRACT becomes a call that the binder knows as PostgreSQL's extract:
// date_part's fields with a numeric result. A FILTER keeps the aggregate's first argument only
// where cond holds (count(*) counts 1s), which is what FILTER means for
// aggregates that skip NULLs; array_agg, jsonb_agg and json_agg, which
// keep them, and the object aggregates, whose NULL key is an error, take
// the condition and the argument together (AggFilterFunc).
func (r *rewriter) funcPass() error {
	if !hasWord(r.toks, "extract") && !hasWord(r.toks, "concat") && !hasWord(r.toks, "filter") &&
		!hasWord(r.toks, "stddev") && !hasWord(r.toks, "variance") && !hasWord(r.toks, "cardinality") &&
		!hasWord(r.toks, "count") && !hasWord(r.toks, "nextval") && !hasWord(r.toks, "currval") &&
		!hasWord(r.toks, "setval") && !hasWord(r.toks, "lastval") {
		return nil
	}
	out := make([]token, 0, len(r.toks))
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		var err error
		switch {
		case t.isWord("count") && i+2 < len(r.toks) && r.toks[i+1].isOp("(") && r.toks[i+2].isOp(")") &&
			(i == 0 || !r.toks[i-1].isOp(".") || i >= 2 && r.toks[i-2].isWord("pg_catalog")):
			return errorAt(r.src, t, sqlerr.WrongObjectType, "count(*) must be used to call a parameterless aggregate function").
				WithHint("Write count(*) to count rows.")
		case t.isWord("extract") && i+1 < len(r.toks) && r.toks[i+1].isOp("("):
			out, i, err = r.extract(out, i)
		case t.isWord("concat") && i+1 < len(r.toks) && r.toks[i+1].isOp("("):
			t.val = ConcatFunc
			out = append(out, t)
		case t.isWord("nextval", "currval", "setval", "lastval") && i+1 < len(r.toks) && r.toks[i+1].isOp("("):
			t.val = SequenceFuncPrefix + t.val
			out = append(out, t)
		case t.isWord("cardinality") && i+1 < len(r.toks) && r.toks[i+1].isOp("("):
			t.val = CardinalityFunc
			out = append(out, t)
		case t.isWord("stddev", "variance") && i+1 < len(r.toks) && r.toks[i+1].isOp("("):
			// OVER (...) follows a window aggregate, which the TiDB parser
			// reads only under its own names.
			if end := matchParen(r.toks, i+1); end > 0 && end+1 < len(r.toks) && r.toks[end+1].isWord("over") {
				t.val = map[string]string{"stddev": "stddev_samp", "variance": "var_samp"}[t.val]
			} else {
				t.val = map[string]string{"stddev": StddevFunc, "variance": VarianceFunc}[t.val]
			}
			out = append(out, t)
		case t.isWord("filter") && i+2 < len(r.toks) && r.toks[i+1].isOp("(") && r.toks[i+2].isWord("where"):
			out, i, err = r.filter(out, i)
		default:
			out = append(out, t)
		}
		if err != nil {
			return err
		}
	}
	r.toks = out
	return nil
}

// extract rewrites the head of the EXTRACT call at toks[i] onto out and
// returns the index of the last input token it consumed: the operand and
// the closing ')' are scanned as usual.
func (r *rewriter) extract(out []token, i int) ([]token, int, error) {
	t := r.toks[i]
	end := matchParen(r.toks, i+1)
	if end < 0 {
		return nil, i, syntaxError(r.src, eofToken(r.src))
	}
	if err := r.spend(end-i, t); err != nil {
		return nil, i, err
	}
	if i+3 >= end || !r.toks[i+3].isWord("from") {
		return nil, i, syntaxError(r.src, r.toks[min(i+3, end)])
	}
	field := r.toks[i+2]
	if field.kind != tkWord && field.kind != tkString && field.kind != tkIdent {
		return nil, i, syntaxError(r.src, field)
	}
	out = append(out, synth(tkWord, ExtractFunc, t, t.space), r.toks[i+1], synth(tkString, field.val, field, false), synth(tkOp, ",", field, false))
	r.toks[i+4].space = true
	return out, i + 3, nil
}

// filter rewrites the FILTER clause at toks[i] into the aggregate just
// emitted at the end of out, and returns the index of the clause's last
// token. The cost is the length of the aggregate and the clause.
func (r *rewriter) filter(out []token, i int) ([]token, int, error) {
	t := r.toks[i]
	closeArgs := len(out) - 1
	if closeArgs < 0 || !out[closeArgs].isOp(")") {
		return nil, i, syntaxError(r.src, t)
	}
	openArgs := matchParenBack(out, closeArgs)
	end := matchParen(r.toks, i+1)
	if openArgs < 0 || end < 0 {
		return nil, i, syntaxError(r.src, t)
	}
	if openArgs > 0 && (out[openArgs-1].kind == tkWord || out[openArgs-1].kind == tkIdent) && !aggregateNames[out[openArgs-1].val] {
		name := out[openArgs-1]
		return nil, i, errorAt(r.src, name, sqlerr.WrongObjectType, "FILTER specified, but %s is not an aggregate function", name.val).
			WithHint("FILTER applies to aggregate functions only; use CASE WHEN inside the call instead.")
	}
	if err := r.spend(len(out)-openArgs+end-i, t); err != nil {
		return nil, i, err
	}
	cond := withSpace(r.toks[i+3:end], true)
	if len(cond) == 0 {
		return nil, i, syntaxError(r.src, r.toks[end])
	}
	args := append([]token(nil), out[openArgs+1:closeArgs]...)
	closing := out[closeArgs]
	var prefix []token
	if len(args) > 0 && args[0].isWord("distinct", "all") {
		prefix, args = args[:1], args[1:]
	}
	parts := splitTopLevel(args)
	first := parts[0]
	if len(first) == 0 {
		return nil, i, syntaxError(r.src, closing)
	}
	if len(first) == 1 && first[0].isOp("*") {
		first = []token{synth(tkNumber, "1", first[0], true)}
	}
	out = append(out[:openArgs+1], prefix...)
	if openArgs > 0 && out[openArgs-1].isWord("array_agg", "jsonb_agg", "json_agg", "jsonb_object_agg", "json_object_agg") {
		out = append(out, synth(tkWord, AggFilterFunc, t, len(prefix) > 0), synth(tkOp, "(", t, false))
		out = append(out, withSpace(cond, false)...)
		out = append(out, synth(tkOp, ",", t, false))
		out = append(out, withSpace(first, true)...)
		out = append(out, synth(tkOp, ")", t, false))
		out = append(out, args[len(parts[0]):]...)
		out = append(out, closing)
		return out, end, nil
	}
	out = append(out, synth(tkWord, "case", t, len(prefix) > 0), synth(tkWord, "when", t, true))
	out = append(out, cond...)
	out = append(out, synth(tkWord, "then", t, true))
	out = append(out, withSpace(first, true)...)
	out = append(out, synth(tkWord, "end", t, true))
	out = append(out, args[len(parts[0]):]...) // the comma and the other arguments
	out = append(out, closing)
	return out, end, nil
}

// aggregateNames are PostgreSQL 15's aggregate functions (pg_proc rows of
// prokind 'a'), under the names funcPass may already have given them:
// FILTER on any other call is an error, as in PostgreSQL.
var aggregateNames = setOf("array_agg", "avg", "bit_and", "bit_or", "bit_xor", "bool_and", "bool_or",
	"corr", "count", "covar_pop", "covar_samp", "cume_dist", "dense_rank", "every", "json_agg",
	"json_object_agg", "jsonb_agg", "jsonb_object_agg", "max", "min", "mode", "percent_rank",
	"percentile_cont", "percentile_disc", "range_agg", "range_intersect_agg", "rank", "regr_avgx",
	"regr_avgy", "regr_count", "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy",
	"regr_syy", "stddev", "stddev_pop", "stddev_samp", "string_agg", "sum", "var_pop", "var_samp",
	"variance", "xmlagg", StddevFunc, VarianceFunc, ModeFunc)
