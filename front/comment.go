package front

import "streamdb/sqlerr"

// Comment is COMMENT ON {TABLE | STREAM | VIEW | MATERIALIZED VIEW} name
// IS 'text' | NULL, or COMMENT ON COLUMN relation.column IS ...
type Comment struct {
	// Kind is the object kind named, or "" for COMMENT ON COLUMN.
	Kind   ObjectKind
	Schema string
	Name   string // the relation
	Column string // COMMENT ON COLUMN's column, else ""
	// Text is the comment; "" (like NULL, as in PostgreSQL) removes it.
	Text string
}

// parseComment reads COMMENT ON ...
func parseComment(c *cursor) (any, error) {
	c.next() // COMMENT
	if err := c.expectWords("on"); err != nil {
		return nil, err
	}
	n := &Comment{}
	t := c.peek()
	switch {
	case c.word("table"):
		n.Kind = KindTable
	case c.word("stream", "source"):
		n.Kind = KindStream
	case c.words("materialized", "view"):
		n.Kind = KindMaterializedView
	case c.word("view"):
		n.Kind = KindView
	case c.word("column"):
	case t.kind == tkWord:
		return nil, unsupported(c.src, t, "COMMENT ON %s", upper(t.val)).
			WithHint("COMMENT ON takes TABLE, STREAM, VIEW, MATERIALIZED VIEW or COLUMN.")
	default:
		return nil, c.fail()
	}
	var parts []string
	for {
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		parts = append(parts, name)
		if !c.op(".") {
			break
		}
	}
	if n.Kind == "" {
		switch len(parts) {
		case 2:
			n.Name, n.Column = parts[0], parts[1]
		case 3:
			n.Schema, n.Name, n.Column = parts[0], parts[1], parts[2]
		default:
			return nil, sqlerr.New(sqlerr.SyntaxError, "column name must be qualified").
				WithHint("Write COMMENT ON COLUMN table.column IS '...'.")
		}
	} else {
		switch len(parts) {
		case 1:
			n.Name = parts[0]
		case 2:
			n.Schema, n.Name = parts[0], parts[1]
		default:
			return nil, sqlerr.New(sqlerr.SyntaxError, "improper relation name (too many dotted names): %s", joinDotted(parts))
		}
	}
	if err := c.expectWords("is"); err != nil {
		return nil, err
	}
	switch t := c.peek(); {
	case t.kind == tkString:
		c.next()
		n.Text = t.val
	case c.word("null"):
	default:
		return nil, c.fail()
	}
	return n, c.end()
}

func joinDotted(parts []string) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += "."
		}
		s += p
	}
	return s
}
