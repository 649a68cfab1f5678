package front

import (
	"strings"

	"streamdb/sqlerr"
)

// parseAlter reads ALTER SYSTEM ..., ALTER STREAM ... SET POSITION,
// ALTER TABLE ... and ALTER MATERIALIZED VIEW ... AS query.
func parseAlter(st *Statement, c *cursor) (any, error) {
	c.next() // ALTER
	t := c.peek()
	for _, kind := range [][]string{{"table"}, {"view"}, {"materialized", "view"}, {"sequence"}, {"stream"}} {
		if c.peek().isWord(kind[0]) && (len(kind) == 1 || c.peekAt(1).isWord(kind[1])) {
			save := c.i
			c.i += len(kind)
			if isAlterOwner(c) {
				name := upper(kind[0])
				if len(kind) == 2 {
					name += " " + upper(kind[1])
				}
				return parseAlterOwner(c, name)
			}
			c.i = save
		}
	}
	switch {
	case c.word("system"):
		return parseAlterSystem(c)
	case c.word("stream", "source"):
		return parseAlterStream(c)
	case c.word("table"):
		return parseAlterTable(c)
	case c.words("materialized", "view"):
		return parseAlterView(st, c)
	case c.word("view"):
		return parseAlterPlainView(c)
	case c.word("sequence"):
		return parseAlterSequence(c)
	case c.word("secret"):
		return parseAlterSecret(c)
	case t.kind == tkWord:
		return nil, unsupported(c.src, t, "ALTER %s", upper(t.val))
	}
	return nil, c.fail()
}

// parseAlterSystem reads PAUSE | RESUME | SET name {= | TO} value |
// RESET name after ALTER SYSTEM.
func parseAlterSystem(c *cursor) (any, error) {
	switch {
	case c.word("pause"):
		return &AlterSystem{Action: SystemPause}, c.end()
	case c.word("resume"):
		return &AlterSystem{Action: SystemResume}, c.end()
	case c.word("reset"):
		return resetName(c, &Set{System: true, Reset: true})
	case c.word("set"):
		name, err := c.dottedName()
		if err != nil {
			return nil, err
		}
		s := &Set{Name: strings.ToLower(name), System: true}
		if !c.op("=") && !c.word("to") {
			return nil, c.fail()
		}
		return s, setValues(c, s)
	}
	return nil, c.fail()
}

// parseAlterStream reads name SET POSITION {= | TO} position, [IF
// EXISTS] name RENAME TO new, or column actions (parseAlterColumns),
// after ALTER STREAM.
func parseAlterStream(c *cursor) (any, error) {
	if isRename(c) {
		n, err := parseRename(c, false)
		if r, ok := n.(*RenameRelation); ok {
			r.Stream = true
		}
		return n, err
	}
	if isAlterColumns(c) {
		return parseAlterColumns(c, true)
	}
	schema, name, err := c.qualifiedName()
	if err != nil {
		return nil, err
	}
	if err := c.expectWords("set", "position"); err != nil {
		return nil, err
	}
	if !c.op("=") && !c.word("to") {
		return nil, c.fail()
	}
	a := &AlterStreamPosition{Schema: schema, Stream: name}
	t := c.peek()
	switch {
	case t.isWord("timestamp", "timestamptz"):
		p, end, err := readPoint(c.src, c.toks, c.i)
		if err != nil {
			return nil, err
		}
		c.i = end
		a.Position, a.Timestamp = PositionTimestamp, p.Time
		return a, c.end()
	case t.kind == tkString || t.kind == tkWord || t.kind == tkNumber:
		c.next()
		v := strings.ToLower(strings.TrimSpace(t.val))
		if v == PositionEarliest || v == PositionLatest || isDigits(v) {
			a.Position = v
			return a, c.end()
		}
	default:
		return nil, c.fail()
	}
	return nil, errorAt(c.src, t, sqlerr.InvalidParameterValue,
		"invalid stream position \"%s\"", t.val).
		WithHint("Use 'earliest', 'latest', a sequence number or TIMESTAMP '...'.")
}
