package front

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/sqlerr"
)

// ConstraintDef is a UNIQUE, CHECK or FOREIGN KEY constraint of CREATE
// TABLE (written on a column or after the columns) or of ALTER TABLE ...
// ADD CONSTRAINT.
type ConstraintDef struct {
	// Name is CONSTRAINT name's, or "" for a name made from the table and
	// columns (as PostgreSQL makes it).
	Name string
	// Type is "u" (UNIQUE), "c" (CHECK) or "f" (FOREIGN KEY).
	Type string
	// Columns are the constrained columns (UNIQUE, FOREIGN KEY).
	Columns []string
	// Check is a CHECK's expression and CheckText its text as written.
	Check     ast.ExprNode
	CheckText string
	// RefTable and RefColumns are what a foreign key references
	// (RefColumns nil: the referenced table's primary key).
	RefTable   string
	RefColumns []string
	// OnDelete and OnUpdate are the referential actions as pg_constraint
	// codes: "a" NO ACTION (the default), "r" RESTRICT, "c" CASCADE,
	// "n" SET NULL, "d" SET DEFAULT.
	OnDelete string
	OnUpdate string
	// Deferrable and Deferred are DEFERRABLE [INITIALLY DEFERRED] (UNIQUE
	// and FOREIGN KEY only).
	Deferrable bool
	Deferred   bool
}

// AlterTableConstraint is ALTER TABLE name ADD table_constraint or DROP
// CONSTRAINT [IF EXISTS] name [RESTRICT | CASCADE].
type AlterTableConstraint struct {
	Schema   string
	Table    string
	IfExists bool // ALTER TABLE IF EXISTS
	// Add is the constraint to add; nil for DROP CONSTRAINT.
	Add *ConstraintDef
	// Drop names the constraint to drop; DropIfExists is its IF EXISTS.
	Drop         string
	DropIfExists bool
	DropCascade  bool
}

// isAlterConstraint reports whether ALTER TABLE's action at c is ADD
// [CONSTRAINT name] UNIQUE/CHECK/FOREIGN KEY or DROP CONSTRAINT.
func isAlterConstraint(c *cursor) bool {
	t, n := c.peek(), c.peekAt(1)
	switch {
	case t.isWord("add"):
		return n.isWord("constraint", "unique", "check", "foreign", "primary")
	case t.isWord("drop"):
		return n.isWord("constraint")
	}
	return false
}

// parseAlterConstraint reads ADD table_constraint or DROP CONSTRAINT
// [IF EXISTS] name [RESTRICT | CASCADE] after ALTER TABLE [IF EXISTS] name.
func parseAlterConstraint(c *cursor, schema, table string, ifExists bool) (any, error) {
	a := &AlterTableConstraint{Schema: schema, Table: table, IfExists: ifExists}
	if c.word("drop") {
		c.next() // CONSTRAINT
		a.DropIfExists = c.words("if", "exists")
		var err error
		if a.Drop, err = c.name(); err != nil {
			return nil, err
		}
		a.DropCascade = c.word("cascade")
		c.word("restrict")
		return a, c.end()
	}
	c.next() // ADD
	name := ""
	if c.word("constraint") {
		var err error
		if name, err = c.name(); err != nil {
			return nil, err
		}
	}
	t := c.peek()
	if c.words("primary", "key") {
		return parseAddPrimaryKey(c, schema, table, ifExists, name)
	}
	if t.isWord("primary", "exclude") {
		return nil, unsupported(c.src, t, "ALTER TABLE ... ADD %s", upper(t.val))
	}
	def, err := parseTableConstraint(c, name)
	if err != nil {
		return nil, err
	}
	a.Add = def
	return a, c.end()
}

// parseTableConstraint reads UNIQUE (cols) | CHECK (expr) | FOREIGN KEY
// (cols) REFERENCES ... after [CONSTRAINT name] in a table's element list.
func parseTableConstraint(c *cursor, name string) (*ConstraintDef, error) {
	def := &ConstraintDef{Name: name}
	t := c.peek()
	var err error
	switch {
	case c.word("unique"):
		def.Type = "u"
		if err := refuseNullsDistinct(c); err != nil {
			return nil, err
		}
		if def.Columns, err = c.nameList(); err != nil {
			return nil, err
		}
	case c.word("check"):
		def.Type = "c"
		if err := parseCheck(c, def); err != nil {
			return nil, err
		}
	case c.words("foreign", "key"):
		def.Type = "f"
		if def.Columns, err = c.nameList(); err != nil {
			return nil, err
		}
		if err := c.expectWords("references"); err != nil {
			return nil, err
		}
		if err := parseReferences(c, def); err != nil {
			return nil, err
		}
	case t.kind == tkWord:
		return nil, unsupported(c.src, t, "table constraint %s", upper(t.val))
	default:
		return nil, c.fail()
	}
	return def, parseDeferrable(c, def, false)
}

// parseColumnConstraint reads UNIQUE | CHECK (expr) | REFERENCES ... on
// column col, after [CONSTRAINT name]; ok is false when c is at none of
// them.
func parseColumnConstraint(c *cursor, col, name string) (def *ConstraintDef, ok bool, err error) {
	def = &ConstraintDef{Name: name}
	switch {
	case c.word("unique"):
		def.Type = "u"
		def.Columns = []string{col}
		if err := refuseNullsDistinct(c); err != nil {
			return nil, true, err
		}
	case c.word("check"):
		def.Type = "c"
		if err := parseCheck(c, def); err != nil {
			return nil, true, err
		}
	case c.word("references"):
		def.Type = "f"
		def.Columns = []string{col}
		if err := parseReferences(c, def); err != nil {
			return nil, true, err
		}
	default:
		return nil, false, nil
	}
	return def, true, parseDeferrable(c, def, true)
}

// parseCheck reads "(expr) [NO INHERIT]" after CHECK.
func parseCheck(c *cursor, def *ConstraintDef) error {
	if !c.peek().isOp("(") {
		return c.fail()
	}
	open := c.i
	end := matchParen(c.toks, open)
	if end < 0 {
		return syntaxError(c.src, eofToken(c.src))
	}
	var err error
	if def.Check, err = parseExpr(c.src, c.toks[open+1:end], c.toks[end]); err != nil {
		return err
	}
	def.CheckText = c.textOf(open+1, end)
	c.i = end + 1
	c.words("no", "inherit")
	return nil
}

// parseReferences reads "table [(cols)] [MATCH SIMPLE] [ON DELETE action]
// [ON UPDATE action]" after REFERENCES.
func parseReferences(c *cursor, def *ConstraintDef) error {
	schema, table, err := c.qualifiedName()
	if err != nil {
		return err
	}
	if schema != "" && schema != "public" {
		return errorAt(c.src, c.toks[c.i-1], sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", schema, table)
	}
	def.RefTable = table
	if c.peek().isOp("(") {
		if def.RefColumns, err = c.nameList(); err != nil {
			return err
		}
	}
	def.OnDelete, def.OnUpdate = "a", "a"
	for {
		t := c.peek()
		switch {
		case c.words("match", "simple"):
		case c.word("match"):
			return unsupported(c.src, t, "MATCH %s", upper(c.peek().val))
		case c.words("on", "delete"):
			if def.OnDelete, err = parseAction(c); err != nil {
				return err
			}
		case c.words("on", "update"):
			if def.OnUpdate, err = parseAction(c); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// parseAction reads a referential action.
func parseAction(c *cursor) (string, error) {
	switch {
	case c.words("no", "action"):
		return "a", nil
	case c.word("restrict"):
		return "r", nil
	case c.word("cascade"):
		return "c", nil
	case c.words("set", "null"):
		return "n", c.refuseColumnList("SET NULL")
	case c.words("set", "default"):
		return "d", c.refuseColumnList("SET DEFAULT")
	}
	return "", c.fail()
}

// refuseColumnList refuses PostgreSQL 15's SET NULL (cols) form.
func (c *cursor) refuseColumnList(action string) error {
	if t := c.peek(); t.isOp("(") {
		return unsupported(c.src, t, "ON DELETE %s with a column list", action)
	}
	return nil
}

func refuseNullsDistinct(c *cursor) error {
	if t := c.peek(); t.isWord("nulls") {
		if c.peekAt(1).isWord("distinct") {
			c.i += 2
			return nil
		}
		return unsupported(c.src, t, "UNIQUE NULLS NOT DISTINCT")
	}
	return nil
}

// parseDeferrable reads [NOT] DEFERRABLE and INITIALLY {DEFERRED |
// IMMEDIATE} after a constraint (on a column when onColumn), in either
// order.
func parseDeferrable(c *cursor, def *ConstraintDef, onColumn bool) error {
	for {
		t := c.peek()
		switch {
		case c.words("not", "deferrable"):
			def.Deferrable = false
		case c.word("deferrable"):
			def.Deferrable = true
		case c.words("initially", "deferred"):
			def.Deferred = true
		case c.words("initially", "immediate"):
			def.Deferred = false
		case t.isWord("not") && c.peekAt(1).isWord("valid"):
			return unsupported(c.src, t, "NOT VALID")
		default:
			if def.Deferred && !def.Deferrable {
				def.Deferrable = true
			}
			if def.Deferrable && def.Type == "c" {
				if onColumn {
					return errorAt(c.src, t, sqlerr.SyntaxError, "misplaced DEFERRABLE clause")
				}
				return errorAt(c.src, t, sqlerr.FeatureNotSupported, "CHECK constraints cannot be marked DEFERRABLE")
			}
			return nil
		}
	}
}

// parseAddPrimaryKey reads (column, ...) after ALTER TABLE name ADD
// [CONSTRAINT name] PRIMARY KEY: an AlterTable of one AlterAddPrimaryKey
// action, whose Def.Name is the constraint's name ("" when not written)
// and Keys the columns.
func parseAddPrimaryKey(c *cursor, schema, table string, ifExists bool, name string) (any, error) {
	act := AlterAction{Kind: AlterAddPrimaryKey, Def: ColumnDef{Name: name}}
	if err := c.expectOp("("); err != nil {
		return nil, err
	}
	for {
		col, err := c.name()
		if err != nil {
			return nil, err
		}
		act.Keys = append(act.Keys, col)
		if c.op(")") {
			break
		}
		if err := c.expectOp(","); err != nil {
			return nil, err
		}
	}
	return &AlterTable{Schema: schema, Table: table, IfExists: ifExists, Actions: []AlterAction{act}}, c.end()
}
