package front

import (
	"strconv"

	"streamdb/sqlerr"
)

// PostgreSQL's UPDATE and DELETE forms the TiDB parser lacks, rewritten
// into forms it reads before the other passes run:
//
//   - SET (a, b) = (x, y) and SET (a, b) = ROW(x, y) become SET a = x,
//     b = y; SET (a, b) = (SELECT ...) becomes SET a =
//     MultiAssignFunc(1, 2, (SELECT ...)), b = MultiAssignFunc(2, 2,
//     (SELECT ...)), which the statement binds as column 1 (2) of the
//     subquery, of exactly 2 columns.
//   - UPDATE t [AS a] SET ... FROM list WHERE ... becomes the TiDB
//     parser's multi-table UPDATE t [AS a], list SET ... WHERE ..., and
//     DELETE FROM t [AS a] USING list WHERE ... becomes DELETE a FROM t
//     [AS a], list WHERE ...; Statement.DMLJoin marks them, so the target
//     is the first table of TableRefs and a MySQL-style multi-table
//     statement written by hand stays refused.

// updateClauses rewrites an UPDATE's multiple-column assignments and its
// FROM list; join reports a FROM list.
func updateClauses(src string, toks []token) (out []token, join bool, err error) {
	set := topLevelWord(toks, 1, "set")
	if set < 0 {
		return toks, false, nil
	}
	end := len(toks) // the end of the SET list: FROM, WHERE or the end
	for i, depth := set+1, 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.isOp("(", "["):
			depth++
		case t.isOp(")", "]"):
			depth--
		case depth == 0 && t.isWord("where"):
			end = i
		case depth == 0 && t.isWord("from") && !toks[i-1].isWord("distinct"):
			end = i
		}
		if end < len(toks) {
			break
		}
	}
	var list []token
	for n, item := range splitTopLevel(toks[set+1 : end]) {
		if len(item) == 0 {
			return toks, false, nil // TiDB reports the syntax error
		}
		parts, err := multiAssignment(src, item)
		if err != nil {
			return nil, false, err
		}
		if n > 0 {
			list = append(list, synth(tkOp, ",", item[0], false))
		}
		list = append(list, parts...)
	}
	rest := toks[end:]
	if end == len(toks) || !toks[end].isWord("from") {
		return concat(toks[:set+1], list, rest), false, nil
	}
	stop := topLevelWord(toks, end+1, "where")
	if stop < 0 {
		stop = len(toks)
	}
	from := toks[end+1 : stop]
	if len(from) == 0 {
		if stop == len(toks) {
			return nil, false, syntaxError(src, eofToken(src))
		}
		return nil, false, syntaxError(src, toks[stop])
	}
	comma := synth(tkOp, ",", toks[end], false)
	// The FROM list may end in any token (a literal, a parenthesis), so
	// SET no longer follows the table's name, which is how quotePass tells
	// the keyword from a column named set.
	kw := toks[set]
	kw.keyword = true
	return concat(toks[:set], []token{comma}, withSpace(from, true), []token{kw}, list, toks[stop:]), true, nil
}

// multiAssignment rewrites one SET item: (a, b) = source becomes the
// single-column assignments; any other item is returned as it is.
func multiAssignment(src string, item []token) ([]token, error) {
	if len(item) == 0 || !item[0].isOp("(") {
		return item, nil
	}
	closing := matchParen(item, 0)
	if closing < 0 || closing+2 >= len(item) || !item[closing+1].isOp("=") {
		return item, nil // not an assignment TiDB reads; it reports the error
	}
	cols := splitTopLevel(item[1:closing])
	for _, c := range cols {
		if len(c) == 0 {
			return nil, syntaxError(src, item[closing])
		}
	}
	rhs := item[closing+2:]
	// PostgreSQL's code for this one is 0A000.
	badSource := errorAt(src, rhs[0], sqlerr.FeatureNotSupported,
		"source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression")
	var inner []token
	switch {
	case len(rhs) >= 3 && rhs[0].isWord("row") && rhs[1].isOp("(") && matchParen(rhs, 1) == len(rhs)-1:
		inner = rhs[2 : len(rhs)-1]
	case rhs[0].isOp("(") && matchParen(rhs, 0) == len(rhs)-1:
		inner = rhs[1 : len(rhs)-1]
		if len(inner) > 0 && inner[0].isWord("select", "with", "values", "table") {
			return subqueryAssignments(cols, rhs), nil
		}
		if len(splitTopLevel(inner)) < 2 {
			return nil, badSource // (x) is x, not a row
		}
	default:
		return nil, badSource
	}
	var values [][]token
	if len(inner) > 0 {
		values = splitTopLevel(inner)
	}
	if len(values) != len(cols) {
		return nil, errorAt(src, rhs[0], sqlerr.SyntaxError, "number of columns does not match number of values")
	}
	var out []token
	for i, col := range cols {
		if i > 0 {
			out = append(out, synth(tkOp, ",", col[0], false))
		}
		out = append(out, withSpace(col, i > 0)...)
		out = append(out, synth(tkOp, "=", rhs[0], true))
		out = append(out, withSpace(values[i], true)...)
	}
	return out, nil
}

// subqueryAssignments is (cols) = (SELECT ...) as one assignment per
// column, each MultiAssignFunc(i, len(cols), (SELECT ...)).
func subqueryAssignments(cols [][]token, sub []token) []token {
	n := strconv.Itoa(len(cols))
	var out []token
	for i, col := range cols {
		at := col[0]
		if i > 0 {
			out = append(out, synth(tkOp, ",", at, false))
		}
		out = append(out, withSpace(col, i > 0)...)
		out = append(out,
			synth(tkOp, "=", at, true),
			synth(tkWord, MultiAssignFunc, at, true),
			synth(tkOp, "(", at, false),
			synth(tkNumber, strconv.Itoa(i+1), at, false),
			synth(tkOp, ",", at, false),
			synth(tkNumber, n, at, true),
			synth(tkOp, ",", at, false))
		out = append(out, withSpace(sub, true)...)
		out = append(out, synth(tkOp, ")", at, false))
	}
	return out
}

// deleteUsing rewrites DELETE FROM t [[AS] a] USING list [WHERE ...] into
// DELETE a FROM t [AS] a, list [WHERE ...]; join reports a USING list.
func deleteUsing(src string, toks []token) (out []token, join bool, err error) {
	if len(toks) < 3 || !toks[1].isWord("from") {
		return toks, false, nil
	}
	using := topLevelWord(toks, 2, "using")
	if using < 0 {
		return toks, false, nil
	}
	target := toks[2:using]
	if len(target) == 0 {
		return nil, false, syntaxError(src, toks[using])
	}
	name := target // the table's name, or its alias
	for i := len(target) - 1; i > 0; i-- {
		if !target[i].isOp(".") && !target[i-1].isOp(".") && target[i].isName() {
			name = target[i:]
			break
		}
	}
	stop := topLevelWord(toks, using+1, "where")
	if stop < 0 {
		stop = len(toks)
	}
	list := toks[using+1 : stop]
	if len(list) == 0 {
		if stop == len(toks) {
			return nil, false, syntaxError(src, eofToken(src))
		}
		return nil, false, syntaxError(src, toks[stop])
	}
	comma := synth(tkOp, ",", toks[using], false)
	return concat(toks[:1], withSpace(name, true), toks[1:using], []token{comma}, withSpace(list, true), toks[stop:]), true, nil
}
