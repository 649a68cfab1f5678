package front

import "streamdb/expr"

// jsonOpsPass rewrites the json operators, which the TiDB parser does not
// read (or reads as MySQL's), into calls that package expr turns back into
// the operators:
//
//	a -> b, a ->> b     ->  streamdb_json_get(a, b), streamdb_json_get_text(a, b)
//	a #> b, a #>> b     ->  streamdb_json_path(a, b), streamdb_json_path_text(a, b)
//	a ? b, a ?| b, a ?& b  ->  streamdb_json_exists(a, b), ..._any, ..._all
//	a #- b              ->  streamdb_json_delete_path(a, b)
//	a @? b, a @@ b      ->  streamdb_jsonpath_exists_op(a, b), ..._match_op(a, b)
//
// Both operands are primaries, and the operators associate to the left,
// as PostgreSQL's operators of this class (tighter than comparison,
// looser than arithmetic; a cast binds to its primary).
func (r *rewriter) jsonOpsPass() error {
	found := false
	for _, t := range r.toks {
		found = found || t.isOp("->", "->>", "#>", "#>>", "?", "?|", "?&", "#-", "@?", "@@")
	}
	if !found {
		return nil
	}
	out := make([]token, 0, len(r.toks)+8)
	var closes pending
	for i := 0; i < len(r.toks); i++ {
		out = closes.flush(out, i)
		t := r.toks[i]
		if !t.isOp("->", "->>", "#>", "#>>", "?", "?|", "?&", "#-", "@?", "@@") {
			out = append(out, t)
			continue
		}
		if len(out) == 0 || !endsOperand(out[len(out)-1]) {
			return syntaxError(r.src, t)
		}
		s, end := primaryStart(out, len(out)-1), primaryEnd(r.toks, i+1)
		if s < 0 || end < 0 {
			return syntaxError(r.src, tokenOrEOF(r.src, r.toks, i+1))
		}
		if err := r.spend(len(out)-s+end-i, t); err != nil {
			return err
		}
		fn := expr.JSONOperatorFunc(t.val)
		if p, ok := jsonPathOperators[t.val]; ok {
			fn = p
		}
		left := withSpace(out[s:], false)
		out = append(out[:s:s], synth(tkWord, fn, out[s], out[s].space), synth(tkOp, "(", t, false))
		out = append(out, left...)
		out = append(out, synth(tkOp, ",", t, false))
		closes.add(end, synth(tkOp, ")", t, false))
		if i+1 < len(r.toks) {
			r.toks[i+1].space = true
		}
	}
	r.toks = closes.flush(out, len(r.toks))
	return nil
}

// jsonPathOperators are the jsonpath operators, written as calls of
// names of their own, which package expr binds as the functions
// PostgreSQL defines them by: the output column of an operator is
// ?column?, of a call the function's name.
var jsonPathOperators = map[string]string{"@?": expr.JSONPathExistsOpFunc, "@@": expr.JSONPathMatchOpFunc}
