package front

import (
	"strconv"

	"streamdb/sqlerr"
)

// DeclareCursor is DECLARE name [NO SCROLL] CURSOR [WITH[OUT] HOLD] FOR
// SUBSCRIBE ... (a cursor over a view's feed) or FOR a query (SELECT,
// VALUES, TABLE, WITH ...); exactly one of Subscribe and Query is set.
// Both are read with FETCH.
type DeclareCursor struct {
	Name      string
	Subscribe *Subscribe
	Query     *Statement
	Hold      bool
}

// Fetch is FETCH [FORWARD] [n | ALL | NEXT] [FROM | IN] name
// [WITH (timeout = '...')], or MOVE with the same forms (Move set): it
// skips the rows instead of returning them. Count is -1 for ALL.
type Fetch struct {
	Name    string
	Count   int64
	Timeout string // "" when not given
	Move    bool
}

// CloseCursor is CLOSE name | ALL.
type CloseCursor struct {
	Name string
	All  bool
}

func parseDeclare(c *cursor) (any, error) {
	c.next() // DECLARE
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	c.words("no", "scroll")
	if err := c.expectWords("cursor"); err != nil {
		return nil, err
	}
	hold := c.words("with", "hold")
	if !hold {
		c.words("without", "hold")
	}
	if err := c.expectWords("for"); err != nil {
		return nil, err
	}
	if t := c.peek(); t.isOp("(") || t.kind == tkWord && queryStarts[t.val] && !t.isWord("insert", "update", "delete") {
		q, err := parseTokens(c.src, c.toks[c.i:])
		if err != nil {
			return nil, err
		}
		return &DeclareCursor{Name: name, Query: q, Hold: hold}, nil
	}
	if !c.peek().isWord("subscribe") {
		return nil, errorAt(c.src, c.peek(), sqlerr.FeatureNotSupported, "DECLARE CURSOR is supported for queries and SUBSCRIBE").
			WithHint("Declare the cursor FOR SELECT ... or FOR SUBSCRIBE ....")
	}
	sub, err := parseSubscribe(c)
	if err != nil {
		return nil, err
	}
	return &DeclareCursor{Name: name, Subscribe: sub.(*Subscribe)}, nil
}

func parseMove(c *cursor) (any, error) {
	n, err := parseFetch(c)
	if err != nil {
		return nil, err
	}
	f := n.(*Fetch)
	if f.Timeout != "" {
		return nil, sqlerr.New(sqlerr.SyntaxError, "MOVE takes no WITH options")
	}
	f.Move = true
	return f, nil
}

func parseFetch(c *cursor) (any, error) {
	c.next() // FETCH or MOVE
	n := &Fetch{Count: 1}
	c.word("forward")
	switch t := c.peek(); {
	case t.isWord("all"):
		c.next()
		n.Count = -1
	case t.isWord("next"):
		c.next()
	case t.kind == tkNumber:
		c.next()
		v, err := strconv.ParseInt(t.val, 10, 64)
		if err != nil || v < 0 {
			return nil, syntaxError(c.src, t)
		}
		n.Count = v
	}
	if !c.word("from") {
		c.word("in")
	}
	var err error
	if n.Name, err = c.name(); err != nil {
		return nil, err
	}
	if c.word("with") {
		opts, err := parseOptions(c)
		if err != nil {
			return nil, err
		}
		for k, v := range opts {
			if k != "timeout" {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized FETCH option %q", k).
					WithHint("FETCH takes WITH (timeout = '1s').")
			}
			n.Timeout = v
		}
	}
	return n, c.end()
}

func parseClose(c *cursor) (any, error) {
	c.next() // CLOSE
	if c.word("all") {
		return &CloseCursor{All: true}, c.end()
	}
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	return &CloseCursor{Name: name}, c.end()
}
