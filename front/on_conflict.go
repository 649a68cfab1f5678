package front

import "streamdb/sqlerr"

// OnConflict is an INSERT's ON CONFLICT [conflict_target] DO NOTHING or
// DO UPDATE, removed from the query. Columns is the conflict target's
// column list, Constraint its ON CONSTRAINT name; both empty when the
// clause names no target (every unique conflict counts; DO NOTHING only).
//
// Update is set for DO UPDATE SET ... [WHERE cond]: the TiDB text then
// ends in ON DUPLICATE KEY UPDATE with the SET list's assignments (a
// SET (a, b) = (x, y) spelled out as a = x, b = y), and the WHERE
// condition, when there is one, as a last assignment to the column
// OnConflictWhere, so that the statement's parameters keep their order
// in one TiDB text.
type OnConflict struct {
	Columns    []string
	Constraint string
	Update     bool
}

// OnConflictWhere is the name of the assignment that carries the WHERE of
// ON CONFLICT DO UPDATE in the InsertStmt's OnDuplicate list.
const OnConflictWhere = "streamdb_on_conflict_where"

// onConflictClause takes ON CONFLICT ... DO NOTHING off the end of an
// INSERT's tokens (its RETURNING list already split off), and turns
// ON CONFLICT ... DO UPDATE into ON DUPLICATE KEY UPDATE.
func onConflictClause(src string, toks []token) ([]token, *OnConflict, error) {
	at := -1
	for i := 0; i < len(toks); i++ {
		if toks[i].isOp("(") {
			if j := matchParen(toks, i); j > i {
				i = j
			}
			continue
		}
		if toks[i].isWord("on") && i+1 < len(toks) && toks[i+1].isWord("conflict") {
			at = i
			break
		}
	}
	if at < 0 {
		return toks, nil, nil
	}
	c := &cursor{src: src, toks: toks, i: at + 2}
	oc := &OnConflict{}
	switch {
	case c.op("("):
		for {
			t := c.peek()
			if t.isOp("(") {
				return nil, nil, unsupported(src, t, "an expression in an ON CONFLICT target")
			}
			name, err := c.name()
			if err != nil {
				return nil, nil, err
			}
			if c.peek().isOp("(") {
				return nil, nil, unsupported(src, t, "an expression in an ON CONFLICT target")
			}
			if t := c.peek(); t.kind == tkWord {
				return nil, nil, unsupported(src, t, "%s in an ON CONFLICT target", upper(t.val))
			}
			oc.Columns = append(oc.Columns, name)
			if c.op(")") {
				break
			}
			if err := c.expectOp(","); err != nil {
				return nil, nil, err
			}
		}
		if t := c.peek(); t.isWord("where") {
			return nil, nil, unsupported(src, t, "ON CONFLICT ... WHERE")
		}
	case c.words("on", "constraint"):
		name, err := c.name()
		if err != nil {
			return nil, nil, err
		}
		oc.Constraint = name
	}
	if err := c.expectWords("do"); err != nil {
		return nil, nil, err
	}
	if t := c.peek(); t.isWord("update") {
		if len(oc.Columns) == 0 && oc.Constraint == "" {
			return nil, nil, errorAt(src, t, sqlerr.SyntaxError, "ON CONFLICT DO UPDATE requires inference specification or constraint name").
				WithHint("For example, ON CONFLICT (column_name).")
		}
		c.next()
		if err := c.expectWords("set"); err != nil {
			return nil, nil, err
		}
		update, err := doUpdateTokens(src, t, toks[c.i:])
		if err != nil {
			return nil, nil, err
		}
		oc.Update = true
		return concat(toks[:at], update), oc, nil
	}
	if err := c.expectWords("nothing"); err != nil {
		return nil, nil, err
	}
	if err := c.end(); err != nil {
		return nil, nil, err
	}
	return toks[:at], oc, nil
}
