package binder

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// BindWatermark binds a stream's WATERMARK clause, stored in the catalog as
// "<column> AS <expression>", over the stream's columns. It returns nil for
// objects without one.
func BindWatermark(d *catalog.Descriptor, cols []types.Column) (*plan.Watermark, error) {
	if d.Watermark == "" || d.Kind != catalog.KindStream {
		return nil, nil
	}
	colName, exprText, ok := strings.Cut(d.Watermark, " AS ")
	if !ok {
		return nil, sqlerr.New(sqlerr.InternalError, "stream %s: malformed watermark %q in the catalog", d.Name, d.Watermark)
	}
	col := slices.IndexFunc(cols, func(c types.Column) bool { return c.Name == colName })
	if col < 0 {
		return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q named in WATERMARK does not exist", colName)
	}
	if !cols[col].Type.IsTime() {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "WATERMARK column %q is of type %s; it must be a timestamp", colName, cols[col].Type)
	}
	st, err := front.Parse("SELECT " + exprText)
	if err != nil {
		return nil, err
	}
	sel, ok := st.Node.(*ast.SelectStmt)
	if !ok || sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.From != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "WATERMARK needs one expression over the stream's columns")
	}
	b := &binder{stmt: &Params{stmt: st}}
	e, err := b.bindExpr(sel.Fields.Fields[0].Expr, scopeOf(d.Name, cols))
	if err != nil {
		return nil, err
	}
	if !e.Type().IsTime() {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "WATERMARK expression %s is of type %s; it must give a timestamp", exprText, e.Type()).
			WithHint("Write it as the time column minus an interval, e.g. WATERMARK FOR %s AS %s - INTERVAL '5' SECOND.", colName, colName)
	}
	return &plan.Watermark{Col: col, Expr: e, Text: d.Watermark}, nil
}
