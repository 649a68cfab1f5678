package front

import "streamdb/sqlerr"

// doUpdateTokens turns the tokens after ON CONFLICT ... DO UPDATE SET
// (doTok is the UPDATE word, for positions) into ON DUPLICATE KEY UPDATE
// assignments (see OnConflict).
func doUpdateTokens(src string, doTok token, toks []token) ([]token, error) {
	list, cond := toks, []token(nil)
	depth := 0
	for i, t := range toks {
		switch {
		case t.isOp("(", "["):
			depth++
		case t.isOp(")", "]"):
			depth--
		case depth == 0 && t.isWord("where"):
			list, cond = toks[:i], toks[i+1:]
			if len(cond) == 0 {
				return nil, syntaxError(src, eofToken(src))
			}
		}
		if cond != nil {
			break
		}
	}
	if len(list) == 0 {
		return nil, syntaxError(src, tokenOrEOF(src, toks, 0))
	}
	out := []token{
		synth(tkWord, "on", doTok, true), synth(tkWord, "duplicate", doTok, true),
		synth(tkWord, "key", doTok, true), synth(tkWord, "update", doTok, true),
	}
	for n, item := range splitTopLevel(list) {
		if len(item) == 0 {
			return nil, syntaxError(src, tokenOrEOF(src, list, len(list)))
		}
		assigns, err := setItem(src, item)
		if err != nil {
			return nil, err
		}
		for k, a := range assigns {
			if n > 0 || k > 0 {
				out = append(out, synth(tkOp, ",", a[0], false))
			}
			out = append(out, withSpace(a, true)...)
		}
	}
	if cond != nil {
		out = append(out, synth(tkOp, ",", cond[0], false),
			synth(tkWord, OnConflictWhere, cond[0], true), synth(tkOp, "=", cond[0], true),
			synth(tkOp, "(", cond[0], true))
		out = append(out, withSpace(cond, false)...)
		out = append(out, synth(tkOp, ")", cond[len(cond)-1], false))
	}
	return out, nil
}

// setItem reads one item of a SET list: col = expr stays as it is;
// (a, b) = (x, y) and (a, b) = ROW(x, y) become a = x and b = y.
func setItem(src string, item []token) ([][]token, error) {
	if !item[0].isOp("(") {
		if len(item) < 3 || !item[0].isName() {
			return nil, syntaxError(src, item[0])
		}
		return [][]token{item}, nil
	}
	close := matchParen(item, 0)
	if close < 0 || close+1 >= len(item) || !item[close+1].isOp("=") {
		return nil, syntaxError(src, tokenOrEOF(src, item, max(close+1, 1)))
	}
	names := splitTopLevel(item[1:close])
	rhs := item[close+2:]
	isRow := len(rhs) > 0 && rhs[0].isWord("row")
	if isRow {
		rhs = rhs[1:]
	}
	if len(rhs) == 0 || !rhs[0].isOp("(") || matchParen(rhs, 0) != len(rhs)-1 {
		return nil, unsupported(src, tokenOrEOF(src, rhs, 0), "this form of SET (...) = in ON CONFLICT DO UPDATE").
			WithHint("Write SET (a, b) = (x, y) or assign each column: SET a = x, b = y.")
	}
	if len(rhs) > 1 && rhs[1].isWord("select", "with", "values") {
		return nil, unsupported(src, rhs[1], "a subquery in SET (...) = in ON CONFLICT DO UPDATE").
			WithHint("Assign each column: SET a = (SELECT ...), b = (SELECT ...).")
	}
	values := splitTopLevel(rhs[1 : len(rhs)-1])
	if len(values) == 1 && len(names) > 1 && !isRow {
		return nil, errorAt(src, rhs[0], sqlerr.FeatureNotSupported, "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression")
	}
	if len(names) != len(values) {
		return nil, errorAt(src, item[0], sqlerr.SyntaxError, "number of columns does not match number of values")
	}
	out := make([][]token, len(names))
	for i, name := range names {
		if len(name) != 1 || !name[0].isName() {
			return nil, syntaxError(src, tokenOrEOF(src, name, 0))
		}
		if len(values[i]) == 0 {
			return nil, syntaxError(src, rhs[len(rhs)-1])
		}
		a := []token{name[0], synth(tkOp, "=", name[0], true), synth(tkOp, "(", values[i][0], true)}
		a = append(a, values[i]...)
		out[i] = append(a, synth(tkOp, ")", values[i][len(values[i])-1], false))
	}
	return out, nil
}
