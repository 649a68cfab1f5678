package front

import "strings"

// AlterTable is ALTER TABLE or ALTER STREAM with actions on the columns
// (schema evolution): several actions separated by commas, applied in
// order as one change. RENAME [COLUMN] a TO b is an action of its own.
type AlterTable struct {
	Schema   string
	Table    string
	IfExists bool
	// Stream: ALTER STREAM (the object must be a stream); else ALTER
	// TABLE, which names a table or a stream.
	Stream  bool
	Actions []AlterAction
}

// AlterActionKind names an ALTER TABLE action. New actions (constraints)
// add a kind and a case in parseAlterAction.
type AlterActionKind int

const (
	AlterAddColumn AlterActionKind = iota
	AlterDropColumn
	AlterRenameColumn
	AlterSetDefault
	AlterDropDefault
	AlterSetNotNull
	AlterDropNotNull
	AlterColumnType
	// AlterAddIdentity is ALTER COLUMN ... ADD GENERATED {ALWAYS | BY
	// DEFAULT} AS IDENTITY [(options)]: Def.Identity and
	// Def.IdentityOptions.
	AlterAddIdentity
	// AlterAddPrimaryKey is ADD [CONSTRAINT name] PRIMARY KEY (Keys),
	// the constraint's name in Def.Name.
	AlterAddPrimaryKey
)

// AlterAction is one action of an AlterTable.
type AlterAction struct {
	Kind AlterActionKind
	// Column is the column acted on (for ADD COLUMN, Def.Name).
	Column string
	// Def is ADD COLUMN's definition.
	Def ColumnDef
	// IfExists (DROP COLUMN IF EXISTS) or IfNotExists (ADD COLUMN IF NOT
	// EXISTS); Cascade is DROP COLUMN ... CASCADE.
	IfExists    bool
	IfNotExists bool
	Cascade     bool
	// NewName is RENAME COLUMN's new name.
	NewName string
	// Default is SET DEFAULT's expression as written.
	Default string
	// Keys are ADD PRIMARY KEY's columns.
	Keys []string
	// TypeName is ALTER COLUMN ... TYPE's type; Using its USING text.
	TypeName string
	Using    string
}

// isAlterColumns reports whether the tokens after ALTER TABLE / ALTER
// STREAM [IF EXISTS] name are column actions.
func isAlterColumns(c *cursor) bool {
	i := 0
	if c.peek().isWord("if") && c.peekAt(1).isWord("exists") {
		i = 2
	}
	if c.peekAt(i).isWord("only") {
		i++
	}
	if !c.peekAt(i).isName() {
		return false
	}
	i++
	if c.peekAt(i).isOp(".") && c.peekAt(i+1).isName() {
		i += 2
	}
	t, n := c.peekAt(i), c.peekAt(i+1)
	// ADD [CONSTRAINT] UNIQUE/CHECK/FOREIGN KEY/PRIMARY KEY and DROP CONSTRAINT are
	// constraint actions (parseAlterConstraint).
	if (t.isWord("add") && n.isWord("constraint", "unique", "check", "foreign", "primary")) || (t.isWord("drop") && n.isWord("constraint")) {
		return false
	}
	return t.isWord("add", "drop", "alter", "rename")
}

// parseAlterColumns reads [IF EXISTS] [ONLY] name action [, action ...]
// (isAlterColumns holds).
func parseAlterColumns(c *cursor, stream bool) (any, error) {
	a := &AlterTable{Stream: stream, IfExists: c.words("if", "exists")}
	c.word("only")
	var err error
	if a.Schema, a.Table, err = c.qualifiedName(); err != nil {
		return nil, err
	}
	if c.word("rename") {
		c.word("column")
		act := AlterAction{Kind: AlterRenameColumn}
		if act.Column, err = c.name(); err != nil {
			return nil, err
		}
		if err := c.expectWords("to"); err != nil {
			return nil, err
		}
		if act.NewName, err = c.name(); err != nil {
			return nil, err
		}
		a.Actions = append(a.Actions, act)
		return a, c.end()
	}
	for {
		act, err := parseAlterAction(c)
		if err != nil {
			return nil, err
		}
		a.Actions = append(a.Actions, act)
		if !c.op(",") {
			return a, c.end()
		}
	}
}

// parseAlterAction reads one action of ALTER TABLE.
func parseAlterAction(c *cursor) (AlterAction, error) {
	var act AlterAction
	var err error
	t := c.peek()
	switch {
	case c.word("add"):
		if t := c.peek(); t.isWord("constraint", "primary", "unique", "check", "foreign", "exclude") {
			return act, unsupported(c.src, t, "ALTER TABLE ... ADD %s", upper(t.val))
		}
		c.word("column")
		act.Kind = AlterAddColumn
		act.IfNotExists = c.words("if", "not", "exists")
		col, pk, err := parseColumn(c)
		if err != nil {
			return act, err
		}
		if pk {
			col.PrimaryKey = true
		}
		act.Def, act.Column = col, col.Name
		return act, nil
	case c.word("drop"):
		if t := c.peek(); t.isWord("constraint") {
			return act, unsupported(c.src, t, "ALTER TABLE ... DROP %s", upper(t.val))
		}
		c.word("column")
		act.Kind = AlterDropColumn
		act.IfExists = c.words("if", "exists")
		if act.Column, err = c.name(); err != nil {
			return act, err
		}
		if c.word("cascade") {
			act.Cascade = true
		} else {
			c.word("restrict")
		}
		return act, nil
	case c.word("alter"):
		if t := c.peek(); t.isWord("constraint") {
			return act, unsupported(c.src, t, "ALTER TABLE ... ALTER %s", upper(t.val))
		}
		c.word("column")
		if act.Column, err = c.name(); err != nil {
			return act, err
		}
		return act, parseAlterColumnAction(c, &act)
	case t.kind == tkWord:
		return act, unsupported(c.src, t, "ALTER TABLE ... %s", upper(t.val))
	}
	return act, c.fail()
}

// parseAlterColumnAction reads what follows ALTER [COLUMN] name.
func parseAlterColumnAction(c *cursor, act *AlterAction) error {
	t := c.peek()
	switch {
	case c.words("set", "default"):
		act.Kind = AlterSetDefault
		start := c.i
		end := defaultEnd(c.toks, start)
		if end == start {
			return c.fail()
		}
		if _, err := parseExpr(c.src, c.toks[start:end], tokenOrEOF(c.src, c.toks, end)); err != nil {
			return err
		}
		act.Default = c.textOf(start, end)
		c.i = end
		return nil
	case c.words("drop", "default"):
		act.Kind = AlterDropDefault
		return nil
	case c.words("add", "generated"):
		act.Kind = AlterAddIdentity
		return parseIdentity(c, &act.Def)
	case c.words("set", "not", "null"):
		act.Kind = AlterSetNotNull
		return nil
	case c.words("drop", "not", "null"):
		act.Kind = AlterDropNotNull
		return nil
	case c.words("set", "data", "type"), c.word("type"):
		act.Kind = AlterColumnType
		tn, next, err := readTypeName(c.src, c.toks, c.i)
		if err != nil {
			return err
		}
		if !tn.Known {
			return unknownType(c.src, tn)
		}
		c.i = next
		act.TypeName = tn.Text
		if c.word("collate") {
			if _, err := c.name(); err != nil {
				return err
			}
		}
		if c.word("using") {
			start := c.i
			end := start
			for end < len(c.toks) && !c.toks[end].isOp(",") && !c.toks[end].isOp(";") {
				if c.toks[end].isOp("(") {
					if end = matchParen(c.toks, end); end < 0 {
						return c.fail()
					}
				}
				end++
			}
			act.Using = c.textOf(start, end)
			c.i = end
		}
		return nil
	case t.kind == tkWord:
		return unsupported(c.src, t, "ALTER TABLE ... ALTER COLUMN ... %s", strings.ToUpper(t.val))
	}
	return c.fail()
}
