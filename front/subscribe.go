package front

import "streamdb/sqlerr"

// PointEpoch names a point by its epoch (SUBSCRIBE ... AS OF EPOCH e);
// AsOf.ID holds the number.
const PointEpoch PointKind = "epoch"

// Subscribe is SUBSCRIBE [TO] view | (SELECT * FROM view)
// [WITH (snapshot = bool, progress = bool)] [AS OF point]: a feed of the
// view's committed changes. A query in parentheses may only be a SELECT *
// of one view; other queries need a view of their own.
type Subscribe struct {
	Schema, View string
	Options      map[string]string
	AsOf         *AsOf
}

// parseSubscribe reads a SUBSCRIBE statement.
func parseSubscribe(c *cursor) (any, error) {
	c.next() // SUBSCRIBE
	c.word("to")
	n := &Subscribe{}
	var err error
	if c.peek().isOp("(") {
		open := c.next()
		if !c.word("select") || !c.op("*") || !c.word("from") {
			return nil, subscribeQueryUnsupported(c, open)
		}
		if n.Schema, n.View, err = c.qualifiedName(); err != nil {
			return nil, err
		}
		if !c.op(")") {
			return nil, subscribeQueryUnsupported(c, open)
		}
	} else if n.Schema, n.View, err = c.qualifiedName(); err != nil {
		return nil, err
	}
	if c.word("with") {
		if n.Options, err = parseOptions(c); err != nil {
			return nil, err
		}
	}
	if c.words("as", "of") {
		if n.AsOf, err = readPointOrEpoch(c); err != nil {
			return nil, err
		}
	}
	return n, c.end()
}

func subscribeQueryUnsupported(c *cursor, open token) error {
	return errorAt(c.src, open, sqlerr.FeatureNotSupported, "SUBSCRIBE to a query other than SELECT * FROM a view is not supported").
		WithHint("CREATE MATERIALIZED VIEW over the query and SUBSCRIBE to the view.")
}

// readPointOrEpoch reads SAVEPOINT name, CHECKPOINT n, TIMESTAMP '...' or
// EPOCH n at the cursor.
func readPointOrEpoch(c *cursor) (*AsOf, error) {
	if c.word("epoch") {
		t := c.next()
		if t.kind != tkNumber || !isDigits(t.val) {
			return nil, syntaxError(c.src, t)
		}
		return &AsOf{Kind: PointEpoch, ID: t.val}, nil
	}
	p, next, err := readPoint(c.src, c.toks, c.i)
	if err != nil {
		return nil, err
	}
	c.i = next
	return &p, nil
}

// ChangesBetween is SELECT * FROM view CHANGES BETWEEN point AND point:
// the rows whose multiplicity differs between the two points, with the
// difference.
type ChangesBetween struct {
	Schema, View string
	From, To     AsOf
}

// parseChangesBetween recognises a SELECT with CHANGES BETWEEN; ok is
// false for any other query. Only SELECT * FROM view CHANGES BETWEEN ...
// is accepted.
func parseChangesBetween(src string, toks []token) (n *ChangesBetween, ok bool, err error) {
	at := -1
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].isWord("changes") && toks[i+1].isWord("between") {
			at = i
			break
		}
	}
	if at < 0 || !toks[0].isWord("select") {
		return nil, false, nil
	}
	c := &cursor{src: src, toks: toks}
	c.next()
	if !c.op("*") || !c.word("from") {
		return nil, true, errorAt(src, toks[0], sqlerr.FeatureNotSupported, "CHANGES BETWEEN is only supported as SELECT * FROM view CHANGES BETWEEN ... AND ...").
			WithHint("Select from the result with COPY, or filter it in the client.")
	}
	n = &ChangesBetween{}
	if n.Schema, n.View, err = c.qualifiedName(); err != nil {
		return nil, true, err
	}
	if !c.words("changes", "between") {
		return nil, true, c.fail()
	}
	if n.From, c.i, err = readPoint(src, c.toks, c.i); err != nil {
		return nil, true, err
	}
	if err := c.expectWords("and"); err != nil {
		return nil, true, err
	}
	if n.To, c.i, err = readPoint(src, c.toks, c.i); err != nil {
		return nil, true, err
	}
	return n, true, c.end()
}
