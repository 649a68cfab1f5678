package front

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/sqlerr"
)

// Statement is one parsed statement.
type Statement struct {
	// Text is the statement as given to Parse (for EXPLAIN's inner
	// statement: the part of it after the EXPLAIN options).
	Text string
	// TruncatedIdentifiers are the NOTICEs (SQLSTATE 42622) for the
	// identifiers longer than MaxIdentifierBytes that Parse cut, for the
	// session to send when the statement comes from its client.
	TruncatedIdentifiers []string
	// Node is a pointer to one of the node types in nodes.go, or a TiDB
	// statement: *ast.SelectStmt, *ast.SetOprStmt, *ast.InsertStmt,
	// *ast.UpdateStmt or *ast.DeleteStmt.
	Node any
	// Params gives, for each ? marker (ast.ParamMarkerExpr) in the TiDB AST
	// in source (Offset) order, the 1-based number n of the $n it came
	// from. A $n may appear more than once. For EXPLAIN these are the
	// explained statement's.
	Params []int
	// NumParams is the highest $n in the statement.
	NumParams int
	// Windows describes the TUMBLE / HOP table functions of the query,
	// keyed by the table name that replaced them (streamdb_window_N).
	Windows map[string]*WindowTVF
	// AsOf is the query's AS OF clause, removed from the query; nil if none.
	AsOf *AsOf
	// Rewritten is the text handed to the TiDB parser: the query for query
	// and DML statements and for CREATE [MATERIALIZED] VIEW; "" otherwise.
	Rewritten string
	// WithTies: the outermost query block (of a query, or of a view's
	// query) ends in FETCH ... WITH TIES (the AST has its LIMIT).
	WithTies bool
	// Returning is the RETURNING list of an INSERT, UPDATE or DELETE
	// (a * is a field with a WildCard); nil when there is none.
	Returning []*ast.SelectField
	// Overriding is an INSERT's OVERRIDING SYSTEM VALUE ("system") or
	// OVERRIDING USER VALUE ("user"), removed from the query; "" if none.
	Overriding string
	// OnConflict is an INSERT's ON CONFLICT ... DO NOTHING, removed from
	// the query; nil if none.
	OnConflict *OnConflict
	// InsertAlias is the alias of an INSERT's target (INSERT INTO t AS
	// alias), removed from the query; "" if none.
	InsertAlias string
	// DMLJoin marks an UPDATE ... FROM or DELETE ... USING, rewritten
	// into the TiDB parser's multi-table form (update_from.go): the
	// first table of TableRefs is the target, the others its FROM
	// (USING) list.
	DMLJoin bool

	// src and rendered map offsets in Rewritten back to the original text.
	src      string
	rendered *rendered
	// returning maps offsets in the TiDB text of the RETURNING list.
	returning *rendered
}

// IdentPosition returns the 1-based character position of the first
// identifier token equal to name (after case folding) in the rewritten
// query, or 0. It locates names for errors where the TiDB AST keeps no
// offset (table names).
func (st *Statement) IdentPosition(name string) int {
	if st == nil || st.rendered == nil {
		return 0
	}
	for _, t := range st.rendered.toks {
		if (t.kind == tkIdent || t.kind == tkWord) && t.val == name && t.pos >= 0 && t.pos <= len(st.src) {
			return charPos(st.src, t.pos)
		}
	}
	return 0
}

// Position maps a byte offset in Rewritten (as TiDB AST nodes report with
// OriginTextPosition) to PostgreSQL's 1-based character position in the
// original statement text; 0 when it cannot be mapped.
func (st *Statement) Position(rewrittenOffset int) int {
	if st == nil || st.rendered == nil || rewrittenOffset < 0 {
		return 0
	}
	i := st.rendered.tokenAt(rewrittenOffset)
	if i >= len(st.rendered.toks) {
		return 0
	}
	t := st.rendered.toks[i]
	if t.pos < 0 || t.pos > len(st.src) {
		return 0
	}
	return charPos(st.src, t.pos)
}

// Parse parses exactly one statement; a trailing semicolon is allowed. Text
// with no statement in it gives a Statement whose Node is *Empty. Errors
// are *sqlerr.Error: 42601 for syntax errors (with a 1-based character
// Position in sql), 0A000 for statements and constructs streamdb does not
// support, 42704 for unknown type names.
func Parse(sql string) (*Statement, error) {
	toks, err := lex(sql)
	if err != nil {
		return nil, err
	}
	if toks, err = unicodeEscapes(sql, toks); err != nil {
		return nil, err
	}
	truncated := truncateIdentifiers(toks)
	for len(toks) > 0 && toks[0].isOp(";") {
		toks = toks[1:]
	}
	for len(toks) > 0 && toks[len(toks)-1].isOp(";") {
		toks = toks[:len(toks)-1]
	}
	for _, t := range toks {
		if t.isOp(";") {
			return nil, errorAt(sql, t, sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
		}
	}
	st, err := parseTokens(sql, toks)
	if err != nil {
		return nil, err
	}
	st.Text = sql
	st.TruncatedIdentifiers = truncated
	return st, nil
}

// queryStarts are the words that begin statements the TiDB parser reads.
var queryStarts = setOf("select", "with", "values", "table", "insert", "update", "delete")

// unsupportedStatements are PostgreSQL statements streamdb does not offer.
var unsupportedStatements = setOf("vacuum", "analyze",
	"listen", "notify", "unlisten", "do",
	"call", "cluster", "reindex", "refresh", "import", "load", "reassign",
	"security", "merge")

// unsupportedHints say what to use instead of some unsupportedStatements.
var unsupportedHints = map[string]string{
	"listen":   "To follow changes, use SUBSCRIBE to a materialized view (in psql: COPY (SUBSCRIBE v) TO STDOUT), or CREATE SINK to publish them to NATS.",
	"unlisten": "streamdb has no LISTEN channels; a SUBSCRIBE ends when its client cancels it.",
	"notify":   "To publish an event, INSERT INTO a stream, or publish to its NATS subject.",
}

// parseTokens parses the statement made of toks (no semicolons).
func parseTokens(src string, toks []token) (*Statement, error) {
	st := &Statement{NumParams: numParams(toks)}
	if len(toks) == 0 {
		st.Node = &Empty{}
		return st, nil
	}
	st.Text = src[toks[0].pos:toks[len(toks)-1].end]
	c := &cursor{src: src, toks: toks}
	first := toks[0]
	var node any
	var err error
	switch {
	case first.isOp("(") || first.kind == tkWord && queryStarts[first.val]:
		if n, ok, err := parseChangesBetween(src, toks); ok {
			st.Node = n
			return st, err
		}
		if q := matchCatalogQuery(toks); q != nil {
			st.Node = q
			return st, nil
		}
		return parseQuery(st, src, toks)
	case isRoleStatement(toks):
		node, err = parseRoleStatement(c)
	case first.isWord("create"):
		node, err = parseCreate(st, c)
	case first.isWord("drop"):
		node, err = parseDrop(c)
	case first.isWord("show"):
		node, err = parseShow(c)
	case first.isWord("set"):
		node, err = parseSet(c)
	case first.isWord("reset"):
		node, err = parseReset(c)
	case first.isWord("alter"):
		node, err = parseAlter(st, c)
	case first.isWord("explain"):
		node, err = parseExplain(c)
	case first.isWord("comment"):
		node, err = parseComment(c)
	case first.isWord("copy"):
		node, err = parseCopy(c)
	case first.isWord("truncate"):
		node, err = parseTruncate(c)
	case first.isWord("subscribe"):
		node, err = parseSubscribe(c)
	case first.isWord("declare"):
		node, err = parseDeclare(c)
	case first.isWord("fetch"):
		node, err = parseFetch(c)
	case first.isWord("close"):
		node, err = parseClose(c)
	case first.isWord("move"):
		node, err = parseMove(c)
	case first.isWord("discard"):
		node, err = parseDiscard(c)
	case first.isWord("lock"):
		node, err = parseLock(c)
	case first.isWord("deallocate"):
		node, err = parseDeallocate(c)
	case first.isWord("prepare"):
		// Its body's $n are the prepared statement's, not PREPARE's.
		st.NumParams = 0
		node, err = parsePrepare(c)
	case first.isWord("execute"):
		node, err = parseExecute(c)
	case first.isWord("refresh"):
		node, err = parseRefresh(c)
	case first.isWord("flush"):
		c.next()
		node, err = &Flush{}, c.end()
	case first.isWord("checkpoint"):
		c.next()
		node, err = &Checkpoint{}, c.end()
	case first.isWord("savepoint"):
		node, err = parseSavepoint(c)
	case first.isWord("release"):
		node, err = parseRelease(c)
	case first.isWord("rollback", "abort"):
		node, err = parseRollback(c)
	case first.isWord("begin", "start", "commit", "end"):
		node, err = parseTransaction(c)
	case first.kind == tkWord && unsupportedStatements[first.val]:
		err := unsupported(src, first, "%s", upper(first.val))
		if hint := unsupportedHints[first.val]; hint != "" {
			err = err.WithHint("%s", hint)
		}
		return nil, err
	default:
		return nil, syntaxError(src, first)
	}
	if err != nil {
		return nil, err
	}
	st.Node = node
	if e, ok := node.(*Explain); ok {
		st.Params = e.Stmt.Params // the markers of the explained query
	}
	return st, nil
}

// parseQuery rewrites a query or DML statement and parses it with TiDB.
func parseQuery(st *Statement, src string, toks []token) (*Statement, error) {
	toks, list, kw, hasReturning := splitReturning(toks)
	if len(toks) > 0 && toks[0].isWord("insert") {
		toks, st.Overriding, st.InsertAlias = insertClauses(toks)
		var err error
		if toks, st.OnConflict, err = onConflictClause(src, toks); err != nil {
			return nil, err
		}
	}
	if len(toks) > 0 && toks[0].isWord("update") {
		var err error
		if toks, st.DMLJoin, err = updateClauses(src, toks); err != nil {
			return nil, err
		}
	}
	if len(toks) > 0 && toks[0].isWord("delete") {
		var err error
		if toks, st.DMLJoin, err = deleteUsing(src, toks); err != nil {
			return nil, err
		}
	}
	if hasReturning {
		fields, r, err := parseReturning(src, kw, list)
		if err != nil {
			return nil, err
		}
		st.Returning, st.returning = fields, r
	}
	rw, err := rewrite(src, toks)
	if err != nil {
		return nil, err
	}
	node, r, err := parseTiDB(src, rw.toks, eofToken(src))
	if err != nil {
		return nil, err
	}
	switch node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		st.WithTies = rw.withTies
	case *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt:
		if rw.withTies {
			return nil, unsupported(src, toks[0], "FETCH ... WITH TIES in %s", upper(toks[0].val))
		}
	default:
		return nil, unsupported(src, toks[0], "this form of %s", upper(toks[0].val))
	}
	st.Node = node
	st.Rewritten = r.text
	st.src, st.rendered = src, &r
	st.Params = r.params
	st.Windows = rw.windows
	st.AsOf = rw.asOf
	return st, nil
}

// parseResultSet rewrites and parses the query of a view definition.
func parseResultSet(st *Statement, src string, toks []token) (ast.ResultSetNode, error) {
	if len(toks) == 0 {
		return nil, syntaxError(src, eofToken(src))
	}
	rw, err := rewrite(src, toks)
	if err != nil {
		return nil, err
	}
	node, r, err := parseTiDB(src, rw.toks, eofToken(src))
	if err != nil {
		return nil, err
	}
	var q ast.ResultSetNode
	switch n := node.(type) {
	case *ast.SelectStmt:
		q = n
	case *ast.SetOprStmt:
		q = n
	default:
		return nil, syntaxError(src, toks[0])
	}
	st.Rewritten = r.text
	st.src, st.rendered = src, &r
	st.Params = r.params
	st.Windows = rw.windows
	st.AsOf = rw.asOf
	st.WithTies = rw.withTies
	return q, nil
}

// parseExpr rewrites and parses one scalar expression (a watermark or a
// column default) by parsing "SELECT expr"; follow is the token after it.
func parseExpr(src string, toks []token, follow token) (ast.ExprNode, error) {
	if len(toks) == 0 {
		return nil, syntaxError(src, follow)
	}
	rw, err := rewrite(src, toks)
	if err != nil {
		return nil, err
	}
	sel := synth(tkWord, "select", toks[0], false)
	node, _, err := parseTiDB(src, concat([]token{sel}, withSpace(rw.toks, true)), follow)
	if err != nil {
		return nil, err
	}
	s, ok := node.(*ast.SelectStmt)
	if !ok || s.Fields == nil || len(s.Fields.Fields) != 1 || s.From != nil || s.Fields.Fields[0].Expr == nil ||
		s.Fields.Fields[0].AsName.L != "" {
		return nil, syntaxError(src, toks[0])
	}
	return s.Fields.Fields[0].Expr, nil
}
