package front

import (
	"strings"

	"streamdb/sqlerr"
)

// IndexColumn is one key column of CREATE INDEX with its declared order.
type IndexColumn struct {
	Name       string
	Desc       bool
	NullsFirst bool   // NULLS FIRST, given or implied (DESC without NULLS LAST)
	Opclass    string // the operator class named, "" for the default
}

// CreateIndex is
//
//	CREATE [UNIQUE] INDEX [CONCURRENTLY] [[IF NOT EXISTS] name] ON [ONLY]
//	relation [USING btree] (column [ASC | DESC] [NULLS FIRST | LAST], ...)
//
// Name is "" when the statement names no index (the server picks one).
type CreateIndex struct {
	Name         string
	Schema       string // the index name's schema, "" when not dotted
	Table        string
	TableSchema  string
	Unique       bool
	Concurrently bool
	IfNotExists  bool
	Columns      []IndexColumn
}

// DropIndex is DROP INDEX [CONCURRENTLY] [IF EXISTS] name [, ...]
// [CASCADE | RESTRICT].
type DropIndex struct {
	Names    []string
	Schemas  []string
	IfExists bool
}

// parseCreateIndex reads CREATE [UNIQUE] INDEX after INDEX.
func parseCreateIndex(c *cursor, unique bool) (any, error) {
	n := &CreateIndex{Unique: unique, Concurrently: c.word("concurrently")}
	n.IfNotExists = c.words("if", "not", "exists")
	var err error
	if !c.peek().isWord("on") || n.IfNotExists {
		if n.Schema, n.Name, err = c.qualifiedName(); err != nil {
			return nil, err
		}
	}
	if err := c.expectWords("on"); err != nil {
		return nil, err
	}
	c.word("only")
	if n.TableSchema, n.Table, err = c.qualifiedName(); err != nil {
		return nil, err
	}
	if t := c.peek(); c.word("using") {
		m := c.peek()
		if !c.word("btree") {
			if m.kind == tkWord {
				return nil, unsupported(c.src, m, "index access method %q", m.val).
					WithHint("streamdb indexes are btree indexes: leave USING out or write USING btree.")
			}
			return nil, syntaxError(c.src, t)
		}
	}
	if err := c.expectOp("("); err != nil {
		return nil, err
	}
	for {
		t := c.peek()
		if t.isOp("(") {
			return nil, unsupported(c.src, t, "an index on an expression").
				WithHint("Index plain columns: CREATE INDEX ON t (col).")
		}
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		if c.peek().isOp("(") {
			return nil, unsupported(c.src, t, "an index on an expression").
				WithHint("Index plain columns: CREATE INDEX ON t (col).")
		}
		col := IndexColumn{Name: name}
		if t := c.peek(); t.isWord("collate") {
			return nil, unsupported(c.src, t, "COLLATE in an index")
		}
		if t := c.peek(); t.kind == tkWord && !t.isWord("asc", "desc", "nulls") {
			// An operator class (Django's varchar_pattern_ops index for
			// LIKE 'x%'). A streamdb index orders values as their type's
			// default btree class does; the pattern classes order text
			// by bytes, which is the same order for the C collation
			// streamdb compares text in.
			if !strings.HasSuffix(t.val, "_ops") {
				return nil, errorAt(c.src, t, sqlerr.UndefinedObject,
					"operator class %q does not exist for access method \"btree\"", t.val).
					WithHint("Leave the operator class out: streamdb indexes use each type's default order.")
			}
			col.Opclass = t.val
			c.next()
		}
		switch {
		case c.word("asc"):
		case c.word("desc"):
			col.Desc, col.NullsFirst = true, true
		}
		if c.word("nulls") {
			switch {
			case c.word("first"):
				col.NullsFirst = true
			case c.word("last"):
				col.NullsFirst = false
			default:
				return nil, c.fail()
			}
		}
		n.Columns = append(n.Columns, col)
		if c.op(")") {
			break
		}
		if err := c.expectOp(","); err != nil {
			return nil, err
		}
	}
	if t := c.peek(); t.isWord("include", "where", "with", "tablespace", "nulls") {
		what := upper(t.val)
		if t.isWord("where") {
			what = "a partial index (WHERE)"
		}
		return nil, unsupported(c.src, t, "%s in CREATE INDEX", what)
	}
	return n, c.end()
}

// parseDropIndex reads DROP INDEX after INDEX.
func parseDropIndex(c *cursor) (any, error) {
	c.word("concurrently")
	d := &DropIndex{IfExists: c.words("if", "exists")}
	for {
		schema, name, err := c.qualifiedName()
		if err != nil {
			return nil, err
		}
		d.Names = append(d.Names, name)
		d.Schemas = append(d.Schemas, schema)
		if !c.op(",") {
			break
		}
	}
	if !c.word("cascade") {
		c.word("restrict")
	}
	return d, c.end()
}
