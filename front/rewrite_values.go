package front

import (
	"fmt"

	"streamdb/sqlerr"
)

// valuesPass turns a VALUES list in parentheses (a FROM item, or the
// subquery of IN) into the UNION ALL of one-row SELECTs that the TiDB
// parser reads, naming the columns as PostgreSQL does:
//
//	(VALUES (1, 'a'), (2, 'b')) AS v(x, y)
//	  ->  (SELECT 1 AS x, 'a' AS y UNION ALL SELECT 2, 'b') AS v
//
// Without a column list the columns are column1, column2, ... The
// binder's UNION ALL gives each column the common type of its rows.
func (r *rewriter) valuesPass() error {
	if !hasWord(r.toks, "values") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+8)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if t.isWord("values") && valuesStartsQuery(r.toks, i) && !(i > 0 && r.toks[i-1].isOp("(") && valuesFillsParens(r.toks, i)) {
			end, cells, err := r.bareValues(i)
			if err != nil {
				return err
			}
			open := synth(tkOp, "(", t, t.space)
			out = append(out, r.valuesSelect(open, synth(tkOp, ")", r.toks[end-1], false), cells, nil)...)
			i = end - 1
			continue
		}
		if !t.isOp("(") || i+1 >= len(r.toks) || !r.toks[i+1].isWord("values") || !valuesFillsParens(r.toks, i+1) {
			out = append(out, t)
			continue
		}
		end := matchParen(r.toks, i)
		if end < 0 {
			return syntaxError(r.src, t)
		}
		rows := splitTopLevel(r.toks[i+2 : end])
		var cells [][][]token
		for _, row := range rows {
			if len(row) < 2 || !row[0].isOp("(") || matchParen(row, 0) != len(row)-1 {
				return syntaxError(r.src, tokenOrEOF(r.src, r.toks, end))
			}
			vals := splitTopLevel(row[1 : len(row)-1])
			if len(cells) > 0 && len(vals) != len(cells[0]) {
				return errorAt(r.src, row[0], sqlerr.SyntaxError, "VALUES lists must all be the same length")
			}
			cells = append(cells, vals)
		}
		// [AS] alias (x, y): the column list names the columns and goes.
		a := end + 1
		if a < len(r.toks) && r.toks[a].isWord("as") {
			a++
		}
		if c := a + 1; c < len(r.toks) && r.toks[a].isName() && r.toks[c].isOp("(") {
			ce := matchParen(r.toks, c)
			if ce < 0 {
				return syntaxError(r.src, r.toks[c])
			}
			var names []string
			for _, n := range splitTopLevel(r.toks[c+1 : ce]) {
				if len(n) != 1 || !n[0].isName() {
					return syntaxError(r.src, r.toks[c])
				}
				names = append(names, n[0].val)
			}
			if len(names) > len(cells[0]) {
				return errorAt(r.src, r.toks[c], sqlerr.InvalidColumnReference, "VALUES has %d columns available but %d columns specified", len(cells[0]), len(names))
			}
			out = append(out, r.valuesSelect(t, r.toks[end], cells, names)...)
			out = append(out, r.toks[end+1:a+1]...)
			i = ce
			continue
		}
		out = append(out, r.valuesSelect(t, r.toks[end], cells, nil)...)
		i = end
	}
	r.toks = out
	return nil
}

// valuesSelect renders ( SELECT row1 AS names UNION ALL SELECT row2 ... ).
func (r *rewriter) valuesSelect(at, closing token, cells [][][]token, names []string) []token {
	out := []token{at, synth(tkWord, "select", at, false)}
	for ri, row := range cells {
		if ri > 0 {
			out = append(out, synth(tkWord, "union", at, true), synth(tkWord, "all", at, true), synth(tkWord, "select", at, true))
		}
		for ci, v := range row {
			if ci > 0 {
				out = append(out, synth(tkOp, ",", at, false))
			}
			out = append(out, withSpace(v, true)...)
			if ri == 0 {
				name := fmt.Sprintf("column%d", ci+1)
				if ci < len(names) {
					name = names[ci]
				}
				out = append(out, synth(tkWord, "as", at, true), nameToken(name, at, true))
			}
		}
	}
	return append(out, closing)
}

// valuesStartsQuery reports whether the VALUES at i starts a query (not
// INSERT's VALUES): the statement's first word, or after "(" or a set
// operator.
func valuesStartsQuery(toks []token, i int) bool {
	if i+1 >= len(toks) || !toks[i+1].isOp("(") {
		return false
	}
	if i == 0 {
		return true
	}
	p := toks[i-1]
	if p.isWord("all", "distinct") && i >= 2 {
		p = toks[i-2]
	}
	return p.isOp("(") || p.isWord("union", "intersect", "except")
}

// valuesFillsParens reports whether the VALUES at i, just after "(",
// runs to that parenthesis's end: the form the loop of valuesPass
// rewrites whole, with its alias.
func valuesFillsParens(toks []token, i int) bool {
	close := matchParen(toks, i-1)
	j := i + 1
	for j < len(toks) && toks[j].isOp("(") {
		e := matchParen(toks, j)
		if e < 0 {
			return false
		}
		j = e + 1
		if j < len(toks) && toks[j].isOp(",") {
			j++
		}
	}
	return j == close
}

// bareValues reads the rows of the VALUES at i that is not the whole of
// a parenthesis (VALUES (1), (2) ORDER BY 1 LIMIT 1): they end at the
// first token after a row that is not a comma. It returns the index
// after the last row.
func (r *rewriter) bareValues(i int) (int, [][][]token, error) {
	var cells [][][]token
	j := i + 1
	for {
		if j >= len(r.toks) || !r.toks[j].isOp("(") {
			return 0, nil, syntaxError(r.src, tokenOrEOF(r.src, r.toks, j))
		}
		e := matchParen(r.toks, j)
		if e < 0 {
			return 0, nil, syntaxError(r.src, r.toks[j])
		}
		vals := splitTopLevel(r.toks[j+1 : e])
		if len(cells) > 0 && len(vals) != len(cells[0]) {
			return 0, nil, errorAt(r.src, r.toks[j], sqlerr.SyntaxError, "VALUES lists must all be the same length")
		}
		cells = append(cells, vals)
		j = e + 1
		if j >= len(r.toks) || !r.toks[j].isOp(",") {
			return j, cells, nil
		}
		j++
	}
}
