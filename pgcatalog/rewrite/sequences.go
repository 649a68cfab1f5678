package rewrite

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"streamdb/front"
	"streamdb/pgcatalog"
	"streamdb/sqlerr"
)

// pg_get_serial_sequence, over the sequences pgcatalog.Engine lists as
// owned by a table's column.

// pgGetSerialSequence is pg_get_serial_sequence('table', 'column'): the
// qualified name of the sequence of a serial or identity column, NULL
// for another column.
func (v *catalogFuncs) pgGetSerialSequence(args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) != 2 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function pg_get_serial_sequence takes a table name and a column name")
	}
	table, ok1 := ConstString(args[0])
	col, ok2 := ConstString(args[1])
	if !ok1 || !ok2 {
		return v.serialSequenceCase(args), nil
	}
	name := strings.TrimPrefix(pgcatalog.UnquoteQualified(table), "public.")
	rels := v.e.Relations()
	i := slices.IndexFunc(rels, func(r pgcatalog.Relation) bool { return r.Name == name })
	if i < 0 {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", table)
	}
	d := rels[i]
	if !slices.ContainsFunc(d.Columns, func(c pgcatalog.Column) bool { return c.Name == col }) {
		return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", col, name)
	}
	for _, q := range serialSequences(v.e) {
		if q.table == d.Name && q.column == col {
			return value("public." + pgcatalog.QuoteIdent(q.name)), nil
		}
	}
	return value(nil), nil
}

// serialSequenceCase is pg_get_serial_sequence over names known only per
// row (Kysely passes quote_ident(nspname) || '.' || quote_ident(relname)
// and attname): a CASE over every column a sequence is owned by, matching
// the table's name bare or qualified with public, quoted or not.
func (v *catalogFuncs) serialSequenceCase(args []ast.ExprNode) ast.ExprNode {
	c := &ast.CaseExpr{ElseClause: &ast.FuncCallExpr{FnName: ast.NewCIStr(front.CastFunc), Args: []ast.ExprNode{value(nil), value("text")}}}
	for _, q := range serialSequences(v.e) {
		var names []ast.ExprNode
		for _, schema := range []string{"", "public.", `"public".`} {
			for _, rel := range []string{q.table, pgcatalog.QuoteIdent(q.table), `"` + q.table + `"`} {
				names = append(names, value(schema+rel))
			}
		}
		cond := &ast.BinaryOperationExpr{Op: opcode.LogicAnd,
			L: &ast.BinaryOperationExpr{Op: opcode.EQ, L: args[1], R: value(q.column)},
			R: &ast.PatternInExpr{Expr: args[0], List: names}}
		c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: cond, Result: value("public." + pgcatalog.QuoteIdent(q.name))})
	}
	if len(c.WhenClauses) == 0 {
		return c.ElseClause
	}
	return c
}

// serialSequence is a sequence owned by a column of a table (serial,
// identity or OWNED BY), by names.
type serialSequence struct{ name, table, column string }

// serialSequences lists e's sequences owned by a column, by table name
// then as Engine.OwnedSequences orders them.
func serialSequences(e pgcatalog.Engine) []serialSequence {
	rels := map[int64]pgcatalog.Relation{}
	for _, r := range e.Relations() {
		rels[r.OID] = r
	}
	seqs := map[int64]string{}
	for _, q := range e.Sequences() {
		seqs[q.OID] = q.Name
	}
	var out []serialSequence
	for _, o := range e.OwnedSequences() {
		t, ok := rels[o.TableOID]
		if !ok || o.Column < 1 || int(o.Column) > len(t.Columns) {
			continue
		}
		out = append(out, serialSequence{name: seqs[o.OID], table: t.Name, column: t.Columns[o.Column-1].Name})
	}
	return out
}
