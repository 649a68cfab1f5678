package sql

import (
	"context"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"streamdb/catalog"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// pg_get_serial_sequence and a sequence read as a relation; the catalogs
// of sequences are pgcatalog's (pg_sequence.go).

// infoSequenceTimeout bounds reading a sequence's record for pg_sequences
// and SELECT * FROM seq.
const infoSequenceTimeout = 5 * time.Second

// pgGetSerialSequence is pg_get_serial_sequence('table', 'column'): the
// qualified name of the sequence of a serial or identity column, NULL
// for another column.
func (v *catalogFuncs) pgGetSerialSequence(args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) != 2 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function pg_get_serial_sequence takes a table name and a column name")
	}
	table, ok1 := constString(args[0])
	col, ok2 := constString(args[1])
	if !ok1 || !ok2 {
		return v.serialSequenceCase(args), nil
	}
	e := v.s.e
	name := strings.TrimPrefix(unquoteQualified(table), "public.")
	d, ok := e.lookup(name)
	if !ok || d.Kind == catalog.KindSequence {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", table)
	}
	if !hasColumn(d, col) {
		return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", col, name)
	}
	for _, q := range e.ownedSequences(d) {
		if q.Sequence.OwnedByColumn == col {
			return value("public." + quoteIdent(q.Name)), nil
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
	e := v.s.e
	for _, t := range e.objects(catalog.KindTable) {
		for _, q := range e.ownedSequences(t) {
			if q.Sequence.OwnedByColumn == "" {
				continue
			}
			var names []ast.ExprNode
			for _, schema := range []string{"", "public.", `"public".`} {
				for _, rel := range []string{t.Name, quoteIdent(t.Name), `"` + t.Name + `"`} {
					names = append(names, value(schema+rel))
				}
			}
			cond := &ast.BinaryOperationExpr{Op: opcode.LogicAnd,
				L: &ast.BinaryOperationExpr{Op: opcode.EQ, L: args[1], R: value(q.Sequence.OwnedByColumn)},
				R: &ast.PatternInExpr{Expr: args[0], List: names}}
			c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: cond, Result: value("public." + quoteIdent(q.Name))})
		}
	}
	if len(c.WhenClauses) == 0 {
		return c.ElseClause
	}
	return c
}

// sequenceReader is a catalog that reads a sequence as a relation
// (SELECT * FROM seq), as PostgreSQL shows it: last_value, log_cnt,
// is_called.
type sequenceReader interface {
	sequenceTable(d *catalog.Descriptor) (*catalog.Descriptor, func() []types.Row)
}

var sequenceTableColumns = []types.Column{{Name: "last_value", Type: types.Int8}, {Name: "log_cnt", Type: types.Int8},
	{Name: "is_called", Type: types.Bool}}

// sequenceTable is the one row of a sequence read as a relation. log_cnt
// (PostgreSQL's count of values logged ahead) is always 0: the values
// reserved ahead are not part of the catalog.
func (e *Engine) sequenceTable(d *catalog.Descriptor) (*catalog.Descriptor, func() []types.Row) {
	t := &catalog.Descriptor{Name: d.Name, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(sequenceTableColumns)}
	return t, func() []types.Row {
		ctx, cancel := context.WithTimeout(context.Background(), infoSequenceTimeout)
		defer cancel()
		last, called, err := e.lastValue(ctx, d)
		if err != nil || !called {
			last = d.Sequence.Start
		}
		return []types.Row{{intD(last), intD(0), types.NewBool(called)}}
	}
}
