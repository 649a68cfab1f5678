package front

import "streamdb/sqlerr"

// parseCreateView reads CREATE MATERIALIZED VIEW / CREATE VIEW after the
// keywords: [IF NOT EXISTS] name [(columns)] AS query.
func parseCreateView(st *Statement, c *cursor, kind ObjectKind, orReplace bool) (any, error) {
	ifNotExists := c.words("if", "not", "exists")
	schema, name, err := c.qualifiedName()
	if err != nil {
		return nil, err
	}
	var cols []string
	if c.peek().isOp("(") {
		if cols, err = c.nameList(); err != nil {
			return nil, err
		}
	}
	var opts map[string]string
	if kind == KindMaterializedView && c.word("with") {
		if opts, err = parseOptions(c); err != nil {
			return nil, err
		}
	}
	if t := c.peek(); kind == KindView && t.isWord("with") {
		return nil, unsupported(c.src, t, "CREATE VIEW ... WITH (options)").
			WithHint("Leave out the options: a view is read with its owner's privileges and cannot be written through.")
	}
	if err := c.expectWords("as"); err != nil {
		return nil, err
	}
	if at := checkOptionAt(c.toks, c.i); kind == KindView && at >= 0 {
		return nil, unsupported(c.src, c.toks[at], "WITH CHECK OPTION").
			WithHint("Views cannot be written through in streamdb: leave out WITH CHECK OPTION and write to the tables the view reads.")
	}
	end := len(c.toks)
	var noData bool
	if kind == KindMaterializedView {
		end, noData = withDataSuffix(c.toks, c.i)
	}
	query, err := parseResultSet(st, c.src, c.toks[c.i:end])
	if err != nil {
		return nil, err
	}
	text := c.textOf(c.i, end)
	if kind == KindMaterializedView {
		if orReplace && ifNotExists {
			return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE OR REPLACE MATERIALIZED VIEW cannot take IF NOT EXISTS")
		}
		if noData && orReplace {
			return nil, unsupported(c.src, c.toks[end], "CREATE OR REPLACE MATERIALIZED VIEW ... WITH NO DATA").
				WithHint("Drop the view and create it WITH NO DATA, or leave out WITH NO DATA.")
		}
		return &CreateMaterializedView{Schema: schema, Name: name, IfNotExists: ifNotExists, Replace: orReplace,
			Columns: cols, Options: opts, Query: query, QueryText: text, NoData: noData}, nil
	}
	return &CreateView{Schema: schema, Name: name, IfNotExists: ifNotExists, OrReplace: orReplace,
		Columns: cols, Query: query, QueryText: text}, nil
}

// withDataSuffix finds a trailing WITH [NO] DATA after the query that
// starts at toks[from]: it returns where the query ends and whether the
// suffix said NO DATA.
func withDataSuffix(toks []token, from int) (end int, noData bool) {
	n := len(toks)
	switch {
	case n-from > 3 && toks[n-3].isWord("with") && toks[n-2].isWord("no") && toks[n-1].isWord("data"):
		return n - 3, true
	case n-from > 2 && toks[n-2].isWord("with") && toks[n-1].isWord("data"):
		return n - 2, false
	}
	return n, false
}

// parseRefresh reads REFRESH MATERIALIZED VIEW [CONCURRENTLY] name
// [WITH DATA]. WITH NO DATA, which empties a PostgreSQL view until its
// next refresh, is refused: a streamdb view is never emptied by choice
// (one created WITH NO DATA is empty until its first refresh).
func parseRefresh(c *cursor) (any, error) {
	c.next() // REFRESH
	if err := c.expectWords("materialized", "view"); err != nil {
		return nil, err
	}
	concurrently := c.word("concurrently")
	schema, name, err := c.qualifiedName()
	if err != nil {
		return nil, err
	}
	if t := c.peek(); c.words("with", "no", "data") {
		return nil, unsupported(c.src, t, "REFRESH MATERIALIZED VIEW ... WITH NO DATA").
			WithHint("A streamdb materialized view always holds its query's current rows; drop it to free its state.")
	}
	c.words("with", "data")
	return &RefreshMaterializedView{Schema: schema, Name: name, Concurrently: concurrently}, c.end()
}

// parseDrop reads DROP STREAM | TABLE | MATERIALIZED VIEW | VIEW
// [IF EXISTS] name [, ...] [CASCADE | RESTRICT].
func parseDrop(c *cursor) (any, error) {
	c.next() // DROP
	d := &Drop{}
	t := c.peek()
	switch {
	case c.word("source"):
		d.Kind, d.Source = KindStream, true
	case c.word("stream"):
		d.Kind = KindStream
	case c.word("table"):
		d.Kind = KindTable
	case c.words("materialized", "view"):
		d.Kind = KindMaterializedView
	case c.word("view"):
		d.Kind = KindView
	case c.word("sink"):
		return parseDropSink(c)
	case c.word("secret"):
		return parseDropSecret(c)
	case c.word("schema"):
		return parseDropSchema(c)
	case c.word("sequence"):
		d.Kind = KindSequence
	case c.word("index"):
		return parseDropIndex(c)
	case t.kind == tkWord:
		return nil, unsupported(c.src, t, "DROP %s", upper(t.val))
	default:
		return nil, c.fail()
	}
	d.IfExists = c.words("if", "exists")
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
	switch {
	case c.word("cascade"):
		d.Cascade = true
	case c.word("restrict"):
	}
	return d, c.end()
}
