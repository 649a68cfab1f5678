package sql

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"streamdb/catalog"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// The catalogs of sequences and column defaults: pg_sequences,
// information_schema.sequences and pg_get_serial_sequence.

// columnDefault is a column's default as the catalogs show it, NULL for
// none.
func columnDefault(c pgColumn) types.Datum {
	if c.def == "" {
		return types.Null
	}
	return str(c.def)
}

// attrDefDatum is what pg_get_expr answers for the column's pg_attrdef
// row, NULL for none.
func attrDefDatum(c pgColumn) types.Datum {
	if c.attrDef() == "" {
		return types.Null
	}
	return str(c.attrDef())
}

// identityGeneration is information_schema.columns.identity_generation.
func identityGeneration(identity string) types.Datum {
	switch identity {
	case front.IdentityAlways:
		return str("ALWAYS")
	case front.IdentityByDefault:
		return str("BY DEFAULT")
	}
	return types.Null
}

// infoSequenceTimeout bounds reading a sequence's record for pg_sequences.
const infoSequenceTimeout = 5 * time.Second

func init() {
	pgSystemTables["pg_catalog.pg_sequences"] = pgSystemTableDef{
		cols: cols("schemaname", types.Text, "sequencename", types.Text, "sequenceowner", types.Text,
			"data_type", types.Text, "start_value", types.Int8, "min_value", types.Int8, "max_value", types.Int8,
			"increment_by", types.Int8, "cycle", types.Bool, "cache_size", types.Int8, "last_value", types.Int8),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, d := range e.objects(catalog.KindSequence) {
				q := d.Sequence
				last := types.Null
				ctx, cancel := context.WithTimeout(context.Background(), infoSequenceTimeout)
				if v, ok, err := e.lastValue(ctx, d); err == nil && ok {
					last = intD(v)
				}
				cancel()
				rows = append(rows, types.Row{str("public"), str(d.Name), str(e.roles.Owner(d)), str(q.Type),
					intD(q.Start), intD(q.Min), intD(q.Max), intD(q.Increment), types.NewBool(q.Cycle),
					intD(q.Cache), last})
			}
			return rows
		},
	}
	pgSystemTables["information_schema.sequences"] = pgSystemTableDef{
		cols: cols("sequence_catalog", types.Text, "sequence_schema", types.Text, "sequence_name", types.Text,
			"data_type", types.Text, "numeric_precision", types.Int4, "numeric_precision_radix", types.Int4,
			"numeric_scale", types.Int4, "start_value", types.Text, "minimum_value", types.Text,
			"maximum_value", types.Text, "increment", types.Text, "cycle_option", types.Text),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, d := range e.objects(catalog.KindSequence) {
				q := d.Sequence
				prec := map[string]int64{"smallint": 16, "integer": 32, "bigint": 64}[q.Type]
				rows = append(rows, types.Row{str(infoSchemaCatalog), str("public"), str(d.Name), str(q.Type),
					intD(prec), intD(2), intD(0), str(strconv.FormatInt(q.Start, 10)), str(strconv.FormatInt(q.Min, 10)),
					str(strconv.FormatInt(q.Max, 10)), str(strconv.FormatInt(q.Increment, 10)), yesNo(q.Cycle)})
			}
			return rows
		},
	}
}

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
