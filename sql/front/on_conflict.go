package front

// OnConflict is an INSERT's ON CONFLICT [conflict_target] DO NOTHING,
// removed from the query (DO UPDATE is refused). Columns is the
// conflict target's column list, Constraint its ON CONSTRAINT name; both
// empty when the clause names no target (every unique conflict counts).
type OnConflict struct {
	Columns    []string
	Constraint string
}

// onConflictClause takes ON CONFLICT ... DO NOTHING off the end of an
// INSERT's tokens (its RETURNING list already split off).
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
		return nil, nil, unsupported(src, t, "ON CONFLICT DO UPDATE").
			WithHint("Use ON CONFLICT DO NOTHING, then UPDATE the rows that were there.")
	}
	if err := c.expectWords("nothing"); err != nil {
		return nil, nil, err
	}
	if err := c.end(); err != nil {
		return nil, nil, err
	}
	return toks[:at], oc, nil
}
