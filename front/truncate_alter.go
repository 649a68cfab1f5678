package front

import "strings"

// AlterTableOptions is ALTER TABLE [IF EXISTS] name SET (k = 'v', ...) or
// RESET (k, ...): it changes a table's or stream's storage options
// (history, retention). Keys are lower-cased; Set is nil for RESET.
type AlterTableOptions struct {
	Schema   string
	Table    string
	IfExists bool
	Set      map[string]string
	Reset    []string
}

// parseAlterTable reads [IF EXISTS] name SET (options) | RESET (names)
// after ALTER TABLE; other forms of ALTER TABLE are not supported.
func parseAlterTable(c *cursor) (any, error) {
	if isRename(c) {
		return parseRename(c, false)
	}
	if isAlterColumns(c) {
		return parseAlterColumns(c, false)
	}
	a := &AlterTableOptions{IfExists: c.words("if", "exists")}
	// ONLY (no descendant tables): streamdb has no table inheritance.
	if c.peek().isWord("only") && c.peekAt(1).isName() {
		c.next()
	}
	var err error
	if a.Schema, a.Table, err = c.qualifiedName(); err != nil {
		return nil, err
	}
	t := c.peek()
	switch {
	case isAlterConstraint(c):
		return parseAlterConstraint(c, a.Schema, a.Table, a.IfExists)
	case c.word("set") && c.peek().isOp("("):
		if a.Set, err = parseOptions(c); err != nil {
			return nil, err
		}
		return a, c.end()
	case c.word("reset"):
		if err := c.expectOp("("); err != nil {
			return nil, err
		}
		for {
			key, err := c.dottedName()
			if err != nil {
				return nil, err
			}
			a.Reset = append(a.Reset, strings.ToLower(key))
			if c.op(")") {
				return a, c.end()
			}
			if err := c.expectOp(","); err != nil {
				return nil, err
			}
		}
	case t.kind == tkWord:
		return nil, unsupported(c.src, t, "ALTER TABLE ... %s", upper(t.val))
	}
	return nil, c.fail()
}
