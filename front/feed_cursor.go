package front

import (
	"strconv"

	"streamdb/sqlerr"
)

// DeclareCursor is DECLARE name [[NO] SCROLL] CURSOR [WITH[OUT] HOLD] FOR
// SUBSCRIBE ... (a cursor over a view's feed) or FOR a query (SELECT,
// VALUES, TABLE, WITH ...); exactly one of Subscribe and Query is set.
// Both are read with FETCH.
type DeclareCursor struct {
	Name      string
	Subscribe *Subscribe
	Query     *Statement
	Hold      bool
	// Scroll is ScrollDefault, ScrollYes (SCROLL) or ScrollNo (NO SCROLL).
	Scroll int
}

// The scroll options of DECLARE.
const (
	ScrollDefault = iota
	ScrollYes
	ScrollNo
)

// Fetch is FETCH [direction] [FROM | IN] name [WITH (timeout = '...')], or
// MOVE with the same forms (Move set): it skips the rows instead of
// returning them. The directions of PostgreSQL are normalized to four:
// NEXT, n, FORWARD [n] and BACKWARD -n are FetchForward; PRIOR, -n,
// BACKWARD [n] and FORWARD -n are FetchBackward (Count is -1 for ALL in
// both); FIRST and LAST are FetchAbsolute 1 and -1; ABSOLUTE n and
// RELATIVE n keep their signed n.
type Fetch struct {
	Name    string
	Dir     int
	Count   int64
	Timeout string // "" when not given
	Move    bool
}

// The directions of FETCH and MOVE.
const (
	FetchForward = iota
	FetchBackward
	FetchAbsolute
	FetchRelative
)

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
	scroll := ScrollDefault
	switch {
	case c.words("no", "scroll"):
		scroll = ScrollNo
	case c.word("scroll"):
		scroll = ScrollYes
	}
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
		return &DeclareCursor{Name: name, Query: q, Hold: hold, Scroll: scroll}, nil
	}
	if !c.peek().isWord("subscribe") {
		return nil, errorAt(c.src, c.peek(), sqlerr.FeatureNotSupported, "DECLARE CURSOR is supported for queries and SUBSCRIBE").
			WithHint("Declare the cursor FOR SELECT ... or FOR SUBSCRIBE ....")
	}
	sub, err := parseSubscribe(c)
	if err != nil {
		return nil, err
	}
	return &DeclareCursor{Name: name, Subscribe: sub.(*Subscribe), Scroll: scroll}, nil
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
	if err := fetchDirection(c, n); err != nil {
		return nil, err
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

// fetchDirection reads FETCH's direction, if any, into n.
func fetchDirection(c *cursor, n *Fetch) error {
	// A direction word that is the last token is the cursor's name
	// (FETCH next).
	if t := c.peekAt(1); t.kind == tkEOF {
		return nil
	}
	all := false
	var err error
	switch {
	case c.word("next"):
	case c.word("prior"):
		n.Dir = FetchBackward
	case c.word("first"):
		n.Dir = FetchAbsolute
	case c.word("last"):
		n.Dir, n.Count = FetchAbsolute, -1
	case c.word("absolute"):
		n.Dir = FetchAbsolute
		n.Count, err = fetchCount(c)
	case c.word("relative"):
		n.Dir = FetchRelative
		n.Count, err = fetchCount(c)
	case c.word("all"):
		all = true
	case c.word("forward", "backward"):
		if c.toks[c.i-1].isWord("backward") {
			n.Dir = FetchBackward
		}
		if c.word("all") {
			all = true
		} else if t := c.peek(); t.kind == tkNumber || t.isOp("-") || t.isOp("+") {
			n.Count, err = fetchCount(c)
		}
	case c.peek().kind == tkNumber || c.peek().isOp("-") || c.peek().isOp("+"):
		n.Count, err = fetchCount(c)
	}
	switch {
	case all:
		n.Count = -1
	case n.Count < 0 && (n.Dir == FetchForward || n.Dir == FetchBackward):
		// A negative count turns FORWARD into BACKWARD and back.
		n.Dir, n.Count = FetchForward+FetchBackward-n.Dir, -n.Count
	}
	return err
}

// fetchCount reads a signed count.
func fetchCount(c *cursor) (int64, error) {
	neg := c.op("-")
	if !neg {
		c.op("+")
	}
	t := c.next()
	v, err := strconv.ParseInt(t.val, 10, 64)
	if t.kind != tkNumber || err != nil {
		return 0, syntaxError(c.src, t)
	}
	if neg {
		v = -v
	}
	return v, nil
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
