package binder

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// bindRowJSON binds row_to_json(row [, pretty]), to_json(row) and
// to_jsonb(row), where row is a table's whole row (the name of a FROM
// item that no column has, as in SELECT row_to_json(t) FROM t) or a row
// constructor ROW(a, b) (fields f1, f2, ...; nested rows nest). streamdb
// has no record type: the call takes the row's fields as arguments
// (expr.RowToJSON). ok is false for to_json and to_jsonb of other values.
func (b *binder) bindRowJSON(n *ast.FuncCallExpr, s *scope) (e expr.Expr, ok bool, err error) {
	name := n.FnName.L
	switch name {
	case "row_to_json", "to_json", "to_jsonb":
	default:
		return nil, false, nil
	}
	if len(n.Args) == 0 {
		return nil, false, nil
	}
	shape, leaves, isRow, err := b.rowValue(n.Args[0], s)
	if err != nil {
		return nil, true, err
	}
	if !isRow {
		if name != "row_to_json" {
			return nil, false, nil
		}
		arg, err := b.bindExpr(n.Args[0], s)
		if err != nil {
			return nil, true, err
		}
		return nil, true, sqlerr.New(sqlerr.UndefinedFunction, "function row_to_json(%s) does not exist", arg.Type()).
			WithHint("row_to_json takes a row: a table's name, row_to_json(t), or a row constructor, row_to_json(ROW(1, 'a')).")
	}
	switch {
	case name == "to_jsonb":
		shape.JSONB = true
		fallthrough
	case name == "to_json":
		if len(n.Args) != 1 {
			return nil, true, sqlerr.New(sqlerr.UndefinedFunction, "function %s(record, ...) does not exist", name).
				WithHint("%s takes one argument.", name)
		}
	case len(n.Args) == 2:
		pretty, err := b.bindExpr(n.Args[1], s)
		if err != nil {
			return nil, true, err
		}
		if pretty, err = expr.Cast(pretty, types.Bool); err != nil {
			return nil, true, err
		}
		c, isConst := pretty.(*expr.Const)
		if !isConst || c.D.IsNull() {
			return nil, true, sqlerr.New(sqlerr.FeatureNotSupported, "the pretty argument of row_to_json must be a constant true or false").
				WithHint("Write row_to_json(t, true) or row_to_json(t).")
		}
		shape.Pretty = c.D.Bool()
	case len(n.Args) > 2:
		return nil, true, sqlerr.New(sqlerr.UndefinedFunction, "function row_to_json(record, ...) with %d arguments does not exist", len(n.Args)).
			WithHint("row_to_json takes a row and, optionally, whether to print it on several lines: row_to_json(t, true).")
	}
	e, err = expr.RowToJSON(shape, leaves)
	return e, true, err
}

// rowValue returns the shape and the values of a row value: a row
// constructor, or a whole-row reference; isRow is false for other
// expressions.
func (b *binder) rowValue(n ast.ExprNode, s *scope) (shape *expr.RowJSON, leaves []expr.Expr, isRow bool, err error) {
	if fields, ok := rowFields(n); ok {
		shape = &expr.RowJSON{}
		for i, f := range fields {
			sub, subLeaves, nested, err := b.rowValue(f, s)
			if err != nil {
				return nil, nil, true, err
			}
			field := expr.RowField{Name: fmt.Sprintf("f%d", i+1)}
			if nested {
				field.Row = sub
				leaves = append(leaves, subLeaves...)
			} else {
				v, err := b.bindExpr(f, s)
				if err != nil {
					return nil, nil, true, err
				}
				leaves = append(leaves, v)
			}
			shape.Fields = append(shape.Fields, field)
		}
		return shape, leaves, true, nil
	}
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		n = p.Expr
	}
	col, ok := n.(*ast.ColumnNameExpr)
	if !ok || col.Name.Table.O != "" || col.Name.Schema.O != "" {
		return nil, nil, false, nil
	}
	table := col.Name.Name.O
	if _, err := s.resolve("", table); err == nil || sqlerr.Code(err) != sqlerr.UndefinedColumn {
		return nil, nil, false, nil // a column of that name is the value
	}
	shape = &expr.RowJSON{}
	for i, c := range s.cols {
		if c.table != table {
			continue
		}
		shape.Fields = append(shape.Fields, expr.RowField{Name: c.name})
		leaves = append(leaves, &expr.ColRef{Idx: i, Name: c.name, T: c.typ})
	}
	if len(leaves) == 0 {
		return nil, nil, false, nil
	}
	if b.agg != nil && !b.inAgg {
		return nil, nil, true, sqlerr.New(sqlerr.FeatureNotSupported, "the whole row of %s in a grouped query is not supported", table).
			WithHint("Pass it to an aggregate (json_agg(row_to_json(%s))), or list the grouped columns: json_build_object('k', k).", table)
	}
	return shape, leaves, true, nil
}
