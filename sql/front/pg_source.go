package front

import (
	"strings"

	"streamdb/sqlerr"
)

// CreatePGSource is CREATE SOURCE name FROM POSTGRES (CONNECTION 'dsn',
// PUBLICATION 'pub') FOR TABLES (schema.table [AS name], ...) | FOR ALL
// TABLES: tables of a PostgreSQL database mirrored through logical
// replication.
type CreatePGSource struct {
	Name        string
	IfNotExists bool
	Connection  string
	Publication string
	// Tables are the tables to mirror; empty with AllTables.
	Tables    []PGSourceTable
	AllTables bool
}

// PGSourceTable is one table of FOR TABLES: the source's schema (""
// means public) and name, and the streamdb table's name ("" means the
// source table's name).
type PGSourceTable struct {
	Schema, Name, As string
}

// isPGSource reports whether the cursor, at SOURCE after CREATE, is at
// a replication source (SOURCE [IF NOT EXISTS] name FROM) rather than a
// stream declaration.
func isPGSource(c *cursor) bool {
	k := 1
	if c.peekAt(1).isWord("if") && c.peekAt(2).isWord("not") && c.peekAt(3).isWord("exists") {
		k = 4
	}
	if !c.peekAt(k).isName() {
		return false
	}
	return c.peekAt(k + 1).isWord("from")
}

// parseCreatePGSource reads what follows CREATE SOURCE.
func parseCreatePGSource(c *cursor) (any, error) {
	n := &CreatePGSource{IfNotExists: c.words("if", "not", "exists")}
	var err error
	if n.Name, err = c.name(); err != nil {
		return nil, err
	}
	if err := c.expectWords("from"); err != nil {
		return nil, err
	}
	if t := c.peek(); !c.word("postgres", "postgresql") {
		if t.kind == tkWord {
			return nil, unsupported(c.src, t, "CREATE SOURCE ... FROM %s", upper(t.val))
		}
		return nil, c.fail()
	}
	if err := c.expectOp("("); err != nil {
		return nil, err
	}
	for {
		at := c.peek()
		key, err := c.name()
		if err != nil {
			return nil, err
		}
		c.op("=")
		val, err := optionValue(c)
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(key) {
		case "connection":
			n.Connection = val
		case "publication":
			n.Publication = val
		default:
			return nil, errorAt(c.src, at, sqlerr.InvalidParameterValue, "unrecognized source option %q; a PostgreSQL source takes CONNECTION and PUBLICATION", key)
		}
		if c.op(")") {
			break
		}
		if err := c.expectOp(","); err != nil {
			return nil, err
		}
	}
	if n.Connection == "" || n.Publication == "" {
		return nil, sqlerr.New(sqlerr.SyntaxError, "a PostgreSQL source needs CONNECTION 'connection string' and PUBLICATION 'name'")
	}
	if err := c.expectWords("for"); err != nil {
		return nil, err
	}
	if c.words("all", "tables") {
		n.AllTables = true
		return n, c.end()
	}
	if err := c.expectWords("tables"); err != nil {
		return nil, err
	}
	if err := c.expectOp("("); err != nil {
		return nil, err
	}
	for {
		var t PGSourceTable
		if t.Schema, t.Name, err = c.qualifiedName(); err != nil {
			return nil, err
		}
		if c.word("as") {
			if t.As, err = c.name(); err != nil {
				return nil, err
			}
		}
		n.Tables = append(n.Tables, t)
		if c.op(")") {
			return n, c.end()
		}
		if err := c.expectOp(","); err != nil {
			return nil, err
		}
	}
}
