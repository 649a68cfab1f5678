package front

import (
	"strconv"

	"streamdb/sqlerr"
)

// DeclareCursor is DECLARE name [NO SCROLL] CURSOR [WITH[OUT] HOLD] FOR
// SUBSCRIBE ...: a cursor over a view's feed, read with FETCH. Cursors
// over other queries are not supported.
type DeclareCursor struct {
	Name      string
	Subscribe *Subscribe
}

// Fetch is FETCH [FORWARD] [n | ALL | NEXT] [FROM | IN] name
// [WITH (timeout = '...')]. Count is -1 for ALL.
type Fetch struct {
	Name    string
	Count   int64
	Timeout string // "" when not given
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
	if !c.words("with", "hold") {
		c.words("without", "hold")
	}
	if err := c.expectWords("for"); err != nil {
		return nil, err
	}
	if !c.peek().isWord("subscribe") {
		return nil, errorAt(c.src, c.peek(), sqlerr.FeatureNotSupported, "DECLARE CURSOR is only supported for SUBSCRIBE").
			WithHint("Run the query itself: its rows come at once.")
	}
	sub, err := parseSubscribe(c)
	if err != nil {
		return nil, err
	}
	return &DeclareCursor{Name: name, Subscribe: sub.(*Subscribe)}, nil
}

func parseFetch(c *cursor) (any, error) {
	c.next() // FETCH
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
