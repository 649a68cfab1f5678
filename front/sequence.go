package front

import (
	"strconv"

	"streamdb/sqlerr"
)

// KindSequence is the object kind of DROP SEQUENCE.
const KindSequence ObjectKind = "sequence"

// SequenceOptions are the options of CREATE SEQUENCE, ALTER SEQUENCE and
// an identity column's (seq options). A nil pointer is an option not
// given; NoMinValue and NoMaxValue are NO MINVALUE and NO MAXVALUE.
type SequenceOptions struct {
	As          string // the type name of AS type ("smallint", "integer", "bigint"), or ""
	Increment   *int64
	MinValue    *int64
	MaxValue    *int64
	NoMinValue  bool
	NoMaxValue  bool
	Start       *int64
	Cache       *int64
	Cycle       *bool
	Restart     bool   // ALTER SEQUENCE ... RESTART
	RestartWith *int64 // RESTART WITH n; nil restarts at the start value
	OwnedBy     string // OWNED BY table.column; "none" for OWNED BY NONE
	// SequenceName is an identity column's SEQUENCE NAME name, or "".
	SequenceName string
}

// CreateSequence is CREATE SEQUENCE [IF NOT EXISTS] name [options].
type CreateSequence struct {
	Schema      string
	Name        string
	IfNotExists bool
	Options     SequenceOptions
}

// AlterSequence is ALTER SEQUENCE [IF EXISTS] name options.
type AlterSequence struct {
	Schema   string
	Name     string
	IfExists bool
	Options  SequenceOptions
}

// parseCreateSequence reads CREATE SEQUENCE after the keyword.
func parseCreateSequence(c *cursor) (any, error) {
	n := &CreateSequence{IfNotExists: c.words("if", "not", "exists")}
	var err error
	if n.Schema, n.Name, err = c.qualifiedName(); err != nil {
		return nil, err
	}
	if err := parseSequenceOptions(c, &n.Options, false); err != nil {
		return nil, err
	}
	if n.Options.SequenceName != "" {
		return nil, sqlerr.New(sqlerr.SyntaxError, "SEQUENCE NAME is an option of an identity column's sequence only")
	}
	return n, c.end()
}

// parseAlterSequence reads ALTER SEQUENCE after the keyword.
func parseAlterSequence(c *cursor) (any, error) {
	n := &AlterSequence{IfExists: c.words("if", "exists")}
	var err error
	if n.Schema, n.Name, err = c.qualifiedName(); err != nil {
		return nil, err
	}
	if t := c.peek(); t.isWord("rename", "owner", "set") {
		return nil, unsupported(c.src, t, "ALTER SEQUENCE ... %s", upper(t.val))
	}
	if err := parseSequenceOptions(c, &n.Options, true); err != nil {
		return nil, err
	}
	if c.atEnd() && n.Options == (SequenceOptions{}) {
		return nil, c.fail()
	}
	return n, c.end()
}

// parseSequenceOptions reads sequence options up to the end of the
// statement or, inside an identity column's parentheses, up to ')'
// (not consumed). alter allows RESTART.
func parseSequenceOptions(c *cursor, o *SequenceOptions, alter bool) error {
	seen := map[string]bool{}
	once := func(t token, name string) error {
		if seen[name] {
			return errorAt(c.src, t, sqlerr.SyntaxError, "conflicting or redundant options")
		}
		seen[name] = true
		return nil
	}
	for !c.atEnd() && !c.peek().isOp(")") {
		t := c.peek()
		var err error
		switch {
		case c.word("as"):
			if err = once(t, "as"); err != nil {
				return err
			}
			tn, next, err := readTypeName(c.src, c.toks, c.i)
			if err != nil {
				return err
			}
			c.i = next
			switch tn.Text {
			case "smallint", "integer", "bigint":
				o.As = tn.Text
			default:
				return errorAt(c.src, tn.first, sqlerr.InvalidParameterValue, "sequence type must be smallint, integer, or bigint")
			}
		case c.word("increment"):
			c.word("by")
			if err = once(t, "increment"); err == nil {
				o.Increment, err = seqNumber(c)
			}
		case c.word("minvalue"):
			if err = once(t, "minvalue"); err == nil {
				o.MinValue, err = seqNumber(c)
			}
		case c.word("maxvalue"):
			if err = once(t, "maxvalue"); err == nil {
				o.MaxValue, err = seqNumber(c)
			}
		case c.words("no", "minvalue"):
			if err = once(t, "minvalue"); err == nil {
				o.NoMinValue = true
			}
		case c.words("no", "maxvalue"):
			if err = once(t, "maxvalue"); err == nil {
				o.NoMaxValue = true
			}
		case c.words("no", "cycle"):
			if err = once(t, "cycle"); err == nil {
				f := false
				o.Cycle = &f
			}
		case c.word("cycle"):
			if err = once(t, "cycle"); err == nil {
				v := true
				o.Cycle = &v
			}
		case c.word("start"):
			c.word("with")
			if err = once(t, "start"); err == nil {
				o.Start, err = seqNumber(c)
			}
		case c.word("cache"):
			if err = once(t, "cache"); err == nil {
				o.Cache, err = seqNumber(c)
			}
		case alter && c.word("restart"):
			if err = once(t, "restart"); err != nil {
				return err
			}
			o.Restart = true
			if c.word("with") || c.peek().kind == tkNumber || c.peek().isOp("-", "+") {
				o.RestartWith, err = seqNumber(c)
			}
		case c.words("owned", "by"):
			if err = once(t, "owned"); err != nil {
				return err
			}
			if c.word("none") {
				o.OwnedBy = "none"
				break
			}
			table, err := c.name()
			if err != nil {
				return err
			}
			if err := c.expectOp("."); err != nil {
				return err
			}
			col, err := c.name()
			if err != nil {
				return err
			}
			if c.op(".") {
				// schema.table.column (pg_dump writes public.t.c).
				schema := table
				table = col
				if col, err = c.name(); err != nil {
					return err
				}
				if schema != "public" {
					return errorAt(c.src, t, sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", schema, table)
				}
			}
			o.OwnedBy = table + "." + col
		case c.words("sequence", "name"):
			// An identity column's sequence's name (pg_dump writes it).
			if err = once(t, "sequence name"); err != nil {
				return err
			}
			schema, name, err := c.qualifiedName()
			if err != nil {
				return err
			}
			if schema != "" && schema != "public" {
				return errorAt(c.src, t, sqlerr.InvalidSchemaName, "schema \"%s\" does not exist", schema)
			}
			o.SequenceName = name
		default:
			return c.fail()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// seqNumber reads a signed integer.
func seqNumber(c *cursor) (*int64, error) {
	neg := false
	if c.op("-") {
		neg = true
	} else {
		c.op("+")
	}
	t := c.peek()
	if t.kind != tkNumber {
		return nil, c.fail()
	}
	c.i++
	text := t.val
	if neg {
		text = "-" + text
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return nil, errorAt(c.src, t, sqlerr.NumericValueOutOfRange, "value %s is out of range for type bigint", text)
	}
	return &v, nil
}
