package front

import (
	"streamdb/sqlerr"
	"streamdb/types"
)

// parseCreate dispatches CREATE statements.
func parseCreate(st *Statement, c *cursor) (any, error) {
	c.next() // CREATE
	if c.words("or", "replace") {
		if c.words("materialized", "view") {
			return parseCreateView(st, c, KindMaterializedView, true)
		}
		if !c.peek().isWord("view") {
			return nil, c.fail()
		}
		c.next()
		return parseCreateView(st, c, KindView, true)
	}
	t := c.peek()
	switch {
	case t.isWord("source") && isPGSource(c):
		c.next()
		return parseCreatePGSource(c)
	case c.word("stream", "source"):
		return parseCreateSource(c, KindStream)
	case c.word("table"):
		return parseCreateSource(c, KindTable)
	case c.words("materialized", "view"):
		return parseCreateView(st, c, KindMaterializedView, false)
	case c.word("view"):
		return parseCreateView(st, c, KindView, false)
	case c.word("sink"):
		return parseCreateSink(c)
	case c.word("secret"):
		return parseCreateSecret(c)
	case c.word("schema"):
		return parseCreateSchema(c)
	case c.word("sequence"):
		return parseCreateSequence(c)
	case c.word("index"):
		return parseCreateIndex(c, false)
	case c.words("unique", "index"):
		return parseCreateIndex(c, true)
	case t.isWord("temp", "temporary", "unlogged", "unique") && c.peekAt(1).kind == tkWord:
		return nil, unsupported(c.src, t, "CREATE %s %s", upper(t.val), upper(c.peekAt(1).val))
	case t.kind == tkWord:
		return nil, unsupported(c.src, t, "CREATE %s", upper(t.val))
	}
	return nil, c.fail()
}

// parseCreateSource reads CREATE STREAM / TABLE after the keyword:
//
//	[IF NOT EXISTS] name ( column type [NOT NULL | NULL | PRIMARY KEY |
//	DEFAULT expr]..., [[CONSTRAINT n] PRIMARY KEY (a, b)],
//	[WATERMARK FOR col AS expr] ) [APPEND ONLY] [WITH (k = 'v', ...)]
func parseCreateSource(c *cursor, kind ObjectKind) (any, error) {
	cs := &CreateSource{Kind: kind}
	cs.IfNotExists = c.words("if", "not", "exists")
	var err error
	if cs.Schema, cs.Name, err = c.qualifiedName(); err != nil {
		return nil, err
	}
	if t := c.peek(); t.isWord("as") {
		return nil, unsupported(c.src, t, "CREATE %s ... AS", upper(string(kind)))
	}
	if err := c.expectOp("("); err != nil {
		return nil, err
	}
	if !c.op(")") {
		if err := parseSourceElements(c, cs); err != nil {
			return nil, err
		}
	}
	for !c.atEnd() {
		t := c.peek()
		switch {
		case c.words("append", "only"):
			cs.AppendOnly = true
		case c.word("with") && cs.Options == nil:
			if cs.Options, err = parseOptions(c); err != nil {
				return nil, err
			}
		case c.word("include"):
			inc, err := parseInclude(c)
			if err != nil {
				return nil, err
			}
			cs.Includes = append(cs.Includes, inc)
		case t.isWord("on", "format", "partition", "inherits", "tablespace"):
			clause := upper(t.val)
			if n := c.peekAt(1); n.kind == tkWord {
				clause += " " + upper(n.val)
			}
			return nil, unsupported(c.src, t, "CREATE %s ... %s", upper(string(kind)), clause)
		default:
			return nil, c.fail()
		}
	}
	if cs.AppendOnly {
		cs.Kind = KindStream
	}
	if err := checkIncludes(c, cs); err != nil {
		return nil, err
	}
	return cs, nil
}

// checkIncludes checks the INCLUDE columns against the declared ones and
// the WATERMARK, which may name an included column (its timestamp).
func checkIncludes(c *cursor, cs *CreateSource) error {
	names := map[string]bool{}
	for _, col := range cs.Columns {
		names[col.Name] = true
	}
	for _, inc := range cs.Includes {
		if names[inc.Column] {
			return sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" specified more than once", inc.Column).
				WithHint("An INCLUDE column needs a name no other column has.")
		}
		names[inc.Column] = true
	}
	if cs.Watermark != nil && !names[cs.Watermark.Column] {
		at := c.peek()
		for i, t := range c.toks {
			if t.isWord("watermark") && i+2 < len(c.toks) && c.toks[i+1].isWord("for") {
				at = c.toks[i+2]
				break
			}
		}
		return errorAt(c.src, at, sqlerr.UndefinedColumn, "column \"%s\" named in WATERMARK does not exist", cs.Watermark.Column)
	}
	return nil
}

// parseSourceElements reads the column and constraint list up to and
// including its closing parenthesis, and checks it: unique column names,
// key columns that exist (the watermark's may be an INCLUDE column:
// checkIncludes). Key columns are NOT NULL.
func parseSourceElements(c *cursor, cs *CreateSource) error {
	var pkToks []token
	colIndex := map[string]int{}
	setPK := func(at token, toks []token) error {
		if cs.PrimaryKey != nil {
			return errorAt(c.src, at, sqlerr.InvalidTableDefinition, "multiple primary keys for %s \"%s\" are not allowed", cs.Kind, cs.Name)
		}
		cs.PrimaryKey = []string{}
		for _, t := range toks {
			cs.PrimaryKey = append(cs.PrimaryKey, t.val)
		}
		pkToks = toks
		return nil
	}
	for {
		t := c.peek()
		switch {
		case c.word("constraint"):
			name, err := c.name()
			if err != nil {
				return err
			}
			if !c.peek().isWord("primary") {
				def, err := parseTableConstraint(c, name)
				if err != nil {
					return err
				}
				cs.Constraints = append(cs.Constraints, *def)
				break
			}
			continue
		case c.words("primary", "key"):
			cols, err := c.nameTokens()
			if err != nil {
				return err
			}
			if err := setPK(t, cols); err != nil {
				return err
			}
		case c.word("watermark"):
			if cs.Watermark != nil {
				return errorAt(c.src, t, sqlerr.InvalidTableDefinition, "multiple WATERMARK clauses are not allowed")
			}
			wm, err := parseWatermark(c)
			if err != nil {
				return err
			}
			cs.Watermark = wm
		case t.isWord("unique", "check", "foreign"):
			def, err := parseTableConstraint(c, "")
			if err != nil {
				return err
			}
			cs.Constraints = append(cs.Constraints, *def)
		case t.isWord("exclude", "like"):
			return unsupported(c.src, t, "table constraint %s", upper(t.val))
		default:
			col, pk, err := parseColumn(c)
			if err != nil {
				return err
			}
			if _, dup := colIndex[col.Name]; dup {
				return errorAt(c.src, t, sqlerr.DuplicateColumn, "column \"%s\" specified more than once", col.Name)
			}
			colIndex[col.Name] = len(cs.Columns)
			cs.Columns = append(cs.Columns, col)
			cs.Constraints = append(cs.Constraints, col.Constraints...)
			if pk {
				if err := setPK(t, []token{t}); err != nil {
					return err
				}
			}
		}
		if c.op(")") {
			break
		}
		if err := c.expectOp(","); err != nil {
			return err
		}
	}
	for _, k := range pkToks {
		i, ok := colIndex[k.val]
		if !ok {
			return errorAt(c.src, k, sqlerr.UndefinedColumn, "column \"%s\" named in key does not exist", k.val)
		}
		cs.Columns[i].PrimaryKey = true
		cs.Columns[i].NotNull = true
	}
	return nil
}

// parseColumn reads "name type [constraints]" and reports whether the column
// says PRIMARY KEY.
func parseColumn(c *cursor) (ColumnDef, bool, error) {
	var col ColumnDef
	name, err := c.name()
	if err != nil {
		return col, false, err
	}
	col.Name = name
	if t := c.peek(); serialTypes[t.val] != "" && t.kind == tkWord && !c.peekAt(1).isOp("[") {
		c.i++
		col.Serial = true
		col.TypeName = serialTypes[t.val]
		col.Type, _ = types.Parse(col.TypeName)
		col.NotNull = true
	} else {
		tn, next, err := readTypeName(c.src, c.toks, c.i)
		if err != nil {
			return col, false, err
		}
		if !tn.Known {
			return col, false, unknownType(c.src, tn)
		}
		c.i = next
		col.TypeName, col.Type = tn.Text, tn.Type
	}
	pk := false
	conName := "" // CONSTRAINT name before the next constraint
	for {
		t := c.peek()
		if def, ok, err := parseColumnConstraint(c, col.Name, conName); ok {
			if err != nil {
				return col, false, err
			}
			col.Constraints = append(col.Constraints, *def)
			conName = ""
			continue
		}
		switch {
		case c.word("constraint"):
			if conName, err = c.name(); err != nil {
				return col, false, err
			}
		case c.words("not", "null"):
			col.NotNull = true
		case c.word("null"):
		case c.words("primary", "key"):
			pk = true
		case c.word("default"):
			start := c.i
			end := defaultEnd(c.toks, start)
			if col.Default, err = parseExpr(c.src, c.toks[start:end], tokenOrEOF(c.src, c.toks, end)); err != nil {
				return col, false, err
			}
			col.DefaultText = c.textOf(start, end)
			c.i = end
		case c.word("generated"):
			if c.peek().isWord("always") && c.peekAt(1).isWord("as") && c.peekAt(2).isOp("(") {
				if err := parseGenerated(c, &col); err != nil {
					return col, false, err
				}
				continue
			}
			if err := parseIdentity(c, &col); err != nil {
				return col, false, err
			}
		case t.isWord("collate"):
			return col, false, unsupported(c.src, t, "column constraint %s", upper(t.val))
		default:
			return col, pk, nil
		}
	}
}

// defaultEnd returns the end of a DEFAULT expression starting at toks[i]: a
// comma or ')' at depth 0, or a column constraint keyword.
func defaultEnd(toks []token, i int) int {
	for j := i; j < len(toks); j++ {
		t := toks[j]
		switch {
		case t.isOp("("):
			if j = matchParen(toks, j); j < 0 {
				return len(toks)
			}
		case t.isOp(",", ")"):
			return j
		case j > i && t.isWord("not", "null", "primary", "unique", "check", "references", "constraint", "default", "collate"):
			if t.isWord("not", "null") && j > i && toks[j-1].isWord("is", "not") {
				continue // x IS [NOT] NULL
			}
			return j
		}
	}
	return len(toks)
}

// parseWatermark reads "FOR column AS expr" after WATERMARK; the expression
// runs to the next comma or ')' at depth 0.
func parseWatermark(c *cursor) (*Watermark, error) {
	if err := c.expectWords("for"); err != nil {
		return nil, err
	}
	col, err := c.name()
	if err != nil {
		return nil, err
	}
	if err := c.expectWords("as"); err != nil {
		return nil, err
	}
	start := c.i
	end := start
	for end < len(c.toks) && !c.toks[end].isOp(",", ")") {
		if c.toks[end].isOp("(") {
			if end = matchParen(c.toks, end); end < 0 {
				return nil, syntaxError(c.src, eofToken(c.src))
			}
		}
		end++
	}
	expr, err := parseExpr(c.src, c.toks[start:end], tokenOrEOF(c.src, c.toks, end))
	if err != nil {
		return nil, err
	}
	c.i = end
	return &Watermark{Column: col, Expr: expr, ExprText: c.textOf(start, end)}, nil
}

// serialTypes maps PostgreSQL's serial pseudo-types to the integer type of
// their column.
var serialTypes = map[string]string{
	"smallserial": "smallint", "serial2": "smallint",
	"serial": "integer", "serial4": "integer",
	"bigserial": "bigint", "serial8": "bigint",
}

// parseIdentity reads {ALWAYS | BY DEFAULT} AS IDENTITY [(seq options)]
// after GENERATED.
func parseIdentity(c *cursor, col *ColumnDef) error {
	t := c.peek()
	switch {
	case c.word("always"):
		col.Identity = IdentityAlways
	case c.words("by", "default"):
		col.Identity = IdentityByDefault
	default:
		return c.fail()
	}
	if c.peek().isWord("as") && c.peekAt(1).isOp("(") {
		return unsupported(c.src, t, "GENERATED BY DEFAULT AS (expr)")
	}
	if err := c.expectWords("as", "identity"); err != nil {
		return err
	}
	col.IdentityOptions = &SequenceOptions{}
	if c.op("(") {
		if err := parseSequenceOptions(c, col.IdentityOptions, false); err != nil {
			return err
		}
		if err := c.expectOp(")"); err != nil {
			return err
		}
	}
	col.NotNull = true
	return nil
}

// parseGenerated reads ALWAYS AS (expr) STORED after GENERATED: a
// generated column. As in PostgreSQL 15, STORED is required.
func parseGenerated(c *cursor, col *ColumnDef) error {
	c.i += 2 // ALWAYS AS
	open := c.i
	end := matchParen(c.toks, open)
	if end < 0 {
		return syntaxError(c.src, eofToken(c.src))
	}
	if end == open+1 {
		return syntaxError(c.src, c.toks[end])
	}
	e, err := parseExpr(c.src, c.toks[open+1:end], c.toks[end])
	if err != nil {
		return err
	}
	col.Generated, col.GeneratedText = e, c.textOf(open+1, end)
	c.i = end + 1
	if t := c.peek(); !c.word("stored") {
		if t.kind == tkEOF {
			return syntaxError(c.src, eofToken(c.src))
		}
		return syntaxError(c.src, t)
	}
	return nil
}
