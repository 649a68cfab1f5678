package front

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/sqlerr"
)

// Copy is COPY name [(cols)] FROM STDIN, COPY name [(cols)] TO STDOUT and
// COPY (query) TO STDOUT, with options in either PostgreSQL syntax:
// WITH (FORMAT csv, HEADER, DELIMITER ';') or the older CSV HEADER
// DELIMITER ';'. Files and programs are refused here: the server reads and
// writes only through the client (psql's \copy turns a file into STDIN).
type Copy struct {
	Schema, Table string
	Columns       []string
	// Query is the statement of COPY (query) TO; Table is then "".
	Query *Statement
	From  bool
	// Options holds each option once, keys lower-case ("format", "header",
	// "delimiter", "null", "quote", "escape", "encoding"); the value is
	// as written, unquoted ("true" for an option given without a value).
	Options map[string]string
	// ForceQuote, ForceNotNull and ForceNull are the column lists of
	// FORCE_QUOTE, FORCE_NOT_NULL and FORCE_NULL; ForceQuote is ["*"] for
	// FORCE QUOTE *.
	ForceQuote, ForceNotNull, ForceNull []string
}

// parseCopy reads a COPY statement.
func parseCopy(c *cursor) (any, error) {
	c.next() // COPY
	cp := &Copy{Options: map[string]string{}}
	if c.peek().isOp("(") {
		q, err := copyQuery(c)
		if err != nil {
			return nil, err
		}
		cp.Query = q
	} else {
		schema, name, err := c.qualifiedName()
		if err != nil {
			return nil, err
		}
		cp.Schema, cp.Table = schema, name
		if c.peek().isOp("(") {
			if cp.Columns, err = c.nameList(); err != nil {
				return nil, err
			}
		}
	}
	dir := c.next()
	switch {
	case dir.isWord("from"):
		cp.From = true
	case dir.isWord("to"):
	default:
		return nil, syntaxError(c.src, dir)
	}
	if cp.From && cp.Query != nil {
		return nil, syntaxError(c.src, dir)
	}
	target := c.next()
	switch {
	case cp.From && target.isWord("stdin"), !cp.From && target.isWord("stdout"):
	case target.kind == tkString || target.isWord("program"):
		where := "STDOUT"
		if cp.From {
			where = "STDIN"
		}
		return nil, errorAt(c.src, target, sqlerr.FeatureNotSupported, "COPY to or from a file or program is not supported").
			WithHint("Use COPY ... %s, or psql's \\copy, which reads and writes the file on the client.", where)
	default:
		return nil, syntaxError(c.src, target)
	}
	if err := parseCopyOptions(c, cp); err != nil {
		return nil, err
	}
	if c.peek().isWord("where") {
		return nil, unsupported(c.src, c.peek(), "COPY FROM ... WHERE")
	}
	return cp, c.end()
}

// copyQuery reads the parenthesised query of COPY (query) TO.
func copyQuery(c *cursor) (*Statement, error) {
	open := c.next()
	depth, end := 1, -1
	for i := c.i; i < len(c.toks) && end < 0; i++ {
		switch {
		case c.toks[i].isOp("("):
			depth++
		case c.toks[i].isOp(")"):
			if depth--; depth == 0 {
				end = i
			}
		}
	}
	if end < 0 {
		return nil, syntaxError(c.src, eofToken(c.src))
	}
	inner := c.toks[c.i:end]
	if len(inner) == 0 {
		return nil, syntaxError(c.src, c.toks[end])
	}
	st, err := parseTokens(c.src, inner)
	if err != nil {
		return nil, err
	}
	switch st.Node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *Subscribe, *ChangesBetween:
	default:
		return nil, unsupported(c.src, open, "COPY (%s ...) TO", upper(inner[0].val)).
			WithHint("COPY (query) TO STDOUT takes a SELECT.")
	}
	c.i = end + 1
	return st, nil
}

// parseCopyOptions reads the options after STDIN or STDOUT.
func parseCopyOptions(c *cursor, cp *Copy) error {
	c.word("with")
	if c.peek().isOp("(") {
		c.next()
		for {
			kt := c.next()
			if kt.kind != tkWord && kt.kind != tkIdent {
				return syntaxError(c.src, kt)
			}
			key := kt.val
			switch {
			case key == "force_quote" && c.op("*"):
				cp.ForceQuote = []string{"*"}
			case key == "force_quote" || key == "force_not_null" || key == "force_null":
				names, err := c.nameList()
				if err != nil {
					return err
				}
				*cp.forceList(key) = names
			case c.peek().isOp(",", ")"):
				cp.Options[key] = "true"
			default:
				v, err := optionValue(c)
				if err != nil {
					return err
				}
				cp.Options[key] = v
			}
			if c.op(")") {
				return nil
			}
			if err := c.expectOp(","); err != nil {
				return err
			}
		}
	}
	// The syntax before PostgreSQL 9.0, which psql's \copy users still
	// write: BINARY, DELIMITER [AS] 'c', NULL [AS] 'n', CSV, HEADER,
	// QUOTE [AS] 'q', ESCAPE [AS] 'e', FORCE QUOTE cols | *,
	// FORCE NOT NULL cols.
	for !c.atEnd() && !c.peek().isWord("where") {
		t := c.next()
		switch {
		case t.isWord("binary"):
			cp.Options["format"] = "binary"
		case t.isWord("csv"):
			cp.Options["format"] = "csv"
		case t.isWord("header"):
			cp.Options["header"] = "true"
		case t.isWord("delimiter", "null", "quote", "escape", "encoding"):
			c.word("as")
			v := c.next()
			if v.kind != tkString {
				return syntaxError(c.src, v)
			}
			cp.Options[t.val] = v.val
		case t.isWord("force"):
			switch {
			case c.word("quote"):
				if c.op("*") {
					cp.ForceQuote = []string{"*"}
					continue
				}
				names, err := copyColumnNames(c)
				if err != nil {
					return err
				}
				cp.ForceQuote = names
			case c.words("not", "null"):
				names, err := copyColumnNames(c)
				if err != nil {
					return err
				}
				cp.ForceNotNull = names
			default:
				return c.fail()
			}
		default:
			return syntaxError(c.src, t)
		}
	}
	return nil
}

// copyColumnNames reads a column list of the old option syntax: names
// separated by commas, with or without parentheses.
func copyColumnNames(c *cursor) ([]string, error) {
	if c.peek().isOp("(") {
		return c.nameList()
	}
	var names []string
	for {
		n, err := c.name()
		if err != nil {
			return nil, err
		}
		names = append(names, n)
		if !c.op(",") {
			return names, nil
		}
	}
}

func (cp *Copy) forceList(key string) *[]string {
	switch key {
	case "force_quote":
		return &cp.ForceQuote
	case "force_not_null":
		return &cp.ForceNotNull
	}
	return &cp.ForceNull
}
