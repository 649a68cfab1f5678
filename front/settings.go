package front

import (
	"strings"

	"streamdb/expr"
)

// showTargets are the multi-word SHOW targets and what they mean.
var showTargets = []struct {
	words  []string
	target string
}{
	{[]string{"materialized", "views"}, "materialized views"},
	{[]string{"time", "zone"}, "timezone"},
	{[]string{"transaction", "isolation", "level"}, "transaction_isolation"},
	{[]string{"session", "authorization"}, "session_authorization"},
}

// parseShow reads SHOW target.
func parseShow(c *cursor) (any, error) {
	c.next() // SHOW
	for _, st := range showTargets {
		if c.words(st.words...) {
			return &Show{Target: st.target}, c.end()
		}
	}
	name, err := c.dottedName()
	if err != nil {
		return nil, err
	}
	return &Show{Target: strings.ToLower(name)}, c.end()
}

// parseSet reads SET [SESSION | LOCAL] name {= | TO} value[, ...],
// SET TIME ZONE value, SET NAMES value and SET [SESSION CHARACTERISTICS AS]
// TRANSACTION modes.
func parseSet(c *cursor) (any, error) {
	c.next() // SET
	s := &Set{}
	switch {
	case c.word("local"):
		s.Local = true
	case c.words("session", "characteristics", "as", "transaction"):
		return setTransaction(c, "default_")
	case c.word("session"):
	}
	switch {
	case c.words("time", "zone"):
		s.Name = "timezone"
		if c.word("local", "default") {
			s.Reset, s.Default = true, true
			return s, c.end()
		}
		if c.peek().isWord("interval") {
			start := c.i
			c.i = len(c.toks)
			s.Value = c.textOf(start, c.i)
			return s, nil
		}
		return s, setValues(c, s)
	case c.word("names"):
		s.Name = "client_encoding"
		return s, setValues(c, s)
	case !s.Local && c.peek().isWord("constraints") && !c.peekAt(1).isOp("=") && !c.peekAt(1).isWord("to"):
		c.next()
		return parseSetConstraints(c)
	case c.word("transaction"):
		return setTransaction(c, "")
	}
	name, err := c.dottedName()
	if err != nil {
		return nil, err
	}
	s.Name = strings.ToLower(name)
	if !c.op("=") && !c.word("to") {
		return nil, c.fail()
	}
	return s, setValues(c, s)
}

// setTransaction reads transaction modes: ISOLATION LEVEL x | READ ONLY |
// READ WRITE | [NOT] DEFERRABLE, separated by commas or spaces (pg_dump
// sends ISOLATION LEVEL REPEATABLE READ, READ ONLY). prefix is "default_"
// for SESSION CHARACTERISTICS.
func setTransaction(c *cursor, prefix string) (any, error) {
	var first *Set
	for {
		s, err := transactionMode(c, prefix)
		if err != nil {
			return nil, err
		}
		if first == nil {
			// SET TRANSACTION lasts until the transaction ends, as SET
			// LOCAL does.
			s.Local = prefix == ""
			first = s
		} else {
			first.Also = append(first.Also, s)
		}
		if c.atEnd() {
			return first, nil
		}
		if c.op(",") && c.atEnd() {
			return nil, c.fail()
		}
	}
}

// transactionMode reads one transaction mode.
func transactionMode(c *cursor, prefix string) (*Set, error) {
	switch {
	case c.words("isolation", "level"):
		start := c.i
		for c.word("read", "committed", "uncommitted", "repeatable", "serializable") {
		}
		if c.i == start {
			return nil, c.fail()
		}
		var words []string
		for _, t := range c.toks[start:c.i] {
			words = append(words, t.val)
		}
		return &Set{Name: prefix + "transaction_isolation", Value: strings.Join(words, " ")}, nil
	case c.words("read", "only"):
		return &Set{Name: prefix + "transaction_read_only", Value: "on"}, nil
	case c.words("read", "write"):
		return &Set{Name: prefix + "transaction_read_only", Value: "off"}, nil
	case c.word("deferrable"):
		return &Set{Name: prefix + "transaction_deferrable", Value: "on"}, nil
	case c.words("not", "deferrable"):
		return &Set{Name: prefix + "transaction_deferrable", Value: "off"}, nil
	}
	return nil, c.fail()
}

// listQuoteParams are the parameters whose values are lists of names
// (PostgreSQL's GUC_LIST_QUOTE): SHOW gives each name as quote_ident would.
var listQuoteParams = map[string]bool{"search_path": true, "temp_tablespaces": true}

// setValues reads the value list of SET; DEFAULT makes it a reset.
func setValues(c *cursor, s *Set) error {
	if c.peek().isWord("default") && c.peekAt(1).kind == tkEOF {
		c.next()
		s.Reset, s.Default = true, true
		return nil
	}
	var values []string
	for {
		quoted := c.peek().kind == tkString || c.peek().kind == tkIdent
		v, err := optionValue(c)
		if err != nil {
			return err
		}
		if listQuoteParams[s.Name] {
			// PostgreSQL keeps each element of such a list as an
			// identifier: folded when unquoted, quoted when it must be.
			if !quoted {
				v = strings.ToLower(v)
			}
			v = expr.QuoteIdent(v)
		}
		values = append(values, v)
		if !c.op(",") {
			break
		}
	}
	s.Value = strings.Join(values, ", ")
	return c.end()
}

// parseReset reads RESET name | RESET ALL.
func parseReset(c *cursor) (any, error) {
	c.next() // RESET
	return resetName(c, &Set{Reset: true})
}

func resetName(c *cursor, s *Set) (any, error) {
	switch {
	case c.words("time", "zone"):
		s.Name = "timezone"
	default:
		name, err := c.dottedName()
		if err != nil {
			return nil, err
		}
		s.Name = strings.ToLower(name)
	}
	return s, c.end()
}
