package binder

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"streamdb/exec"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// scopeColumn is one column visible to expressions: its qualifier (table
// name or alias) and name, both lower case.
type scopeColumn struct {
	table string
	name  string
	typ   types.Type
	mod   types.Modifier // kept for character(n), which pads on output
	// hidden is a column of a JOIN ... USING or NATURAL JOIN input that
	// the join merged: a qualified name (and table.*) still reaches it,
	// an unqualified one and * reach the merged column.
	hidden bool
	// pk: a column of a table's primary key, read from the table (a
	// grouped query may read the table's other columns when it groups by
	// all of them, bind_group_dependent.go).
	pk bool
	// source is the table a merged JOIN ... USING column takes its value
	// from (the left one's, the right one's for RIGHT JOIN), which
	// PostgreSQL names it by in errors; "" for other columns.
	source string
	// relOID is the pg_class OID of the table or system table the
	// column is read from (the system column tableoid), 0 for columns of
	// derived tables and expressions.
	relOID int64
}

// qualifier is the table PostgreSQL's errors name c by: a merged
// column's source even where USING (...) AS alias names it too.
func (c scopeColumn) qualifier() string {
	if c.source != "" {
		return c.source
	}
	return c.table
}

// scope is the row an expression is evaluated over.
type scope struct {
	cols []scopeColumn
}

// scopeOf is the scope of a relation's columns under one name (a table,
// its alias, a subquery's alias).
func scopeOf(table string, cols []types.Column) *scope {
	sc := &scope{cols: make([]scopeColumn, len(cols))}
	for i, c := range cols {
		sc.cols[i] = scopeColumn{table: table, name: c.Name, typ: c.Type, mod: c.Mod}
	}
	return sc
}

// frozenXID is what the system column xmin answers: PostgreSQL's
// FrozenTransactionId, the inserting transaction of a row that every
// transaction sees. streamdb keeps no transaction id per row; tools ask
// for xmin (DBeaver, DataGrip, pgAdmin read it from tables and catalogs)
// to show or compare it, and a constant lets those queries run.
const frozenXID = 2

// systemColumn binds the system columns xmin and tableoid of a FROM item
// in s (of the one named table, or of any when unqualified) when no column
// of that name exists. xmin is a bigint, since streamdb has no xid type;
// tableoid is the pg_class OID of the relation (pg_dump reads it from
// every catalog), and unqualified it needs one relation to read it of.
// Other system columns (ctid, xmax, cmin, cmax) stay undefined.
func (s *scope) systemColumn(table, name string) (expr.Expr, bool) {
	if name == "tableoid" {
		var oid int64
		for _, c := range s.cols {
			if (table == "" || c.table == table) && c.relOID != 0 {
				if oid != 0 && oid != c.relOID {
					return nil, false
				}
				oid = c.relOID
			}
		}
		if oid == 0 {
			return nil, false
		}
		return &expr.Const{D: types.NewInt(oid), T: types.Int8}, true
	}
	if name != "xmin" {
		return nil, false
	}
	for _, c := range s.cols {
		if table == "" || c.table == table {
			return &expr.Const{D: types.NewInt(frozenXID), T: types.Int8}, true
		}
	}
	return nil, false
}

// hasTable reports whether a FROM item of s or of an enclosing query is
// named table. A column qualified by a name no FROM item has is 42P01
// (missing FROM-clause entry), as in PostgreSQL, rather than 42703.
func (b *binder) hasTable(s *scope, table string) bool {
	for _, c := range s.cols {
		if c.table == table {
			return true
		}
	}
	return b.corr != nil && b.corr.b.hasTable(b.corr.outer, table)
}

func (s *scope) resolve(table, name string) (int, error) {
	found := -1
	for i, c := range s.cols {
		if c.name != name || (table != "" && c.table != table) || (table == "" && c.hidden) {
			continue
		}
		if found >= 0 {
			return 0, sqlerr.New(sqlerr.AmbiguousColumn, "column reference %q is ambiguous", name)
		}
		found = i
	}
	if found < 0 {
		if table != "" {
			return 0, sqlerr.New(sqlerr.UndefinedColumn, "column %s.%s does not exist", table, name)
		}
		return 0, sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", name)
	}
	return found, nil
}

// aggContext collects aggregate calls while binding expressions above an
// Aggregate: group keys and aggregates become references to the
// Aggregate's output columns.
type aggContext struct {
	input     *scope
	groupKeys []expr.Expr // bound over input
	groupStrs []string
	calls     []plan.AggCall
	callStrs  []string
}

// binder turns TiDB expressions into bound expressions.
type binder struct {
	stmt   *Params
	agg    *aggContext // non-nil while binding over an aggregate's output
	inAgg  bool        // inside an aggregate's argument
	params []types.Type
	// windows maps the window calls of the query to their rank columns.
	windows map[*ast.WindowFuncExpr]int
	// groupedWindowCols are the columns of a grouped query's windows,
	// whose references are placeholders until the Aggregate is built
	// (bind_window_grouped.go).
	groupedWindowCols []types.Column
	// depth is how deeply bindExpr calls are nested now.
	depth int
	// corr is the query around the subquery being bound, nil at the top.
	corr *correlation
}

// maxExprDepth bounds how deeply expressions nest (parentheses, operator
// chains such as 1+1+...+1). Binding, planning and evaluation recurse once
// per level, so without a bound a long enough query overflows the stack
// and kills the server; PostgreSQL answers such queries with 54001 too.
const maxExprDepth = front.MaxExprDepth

// Params tracks the parameters of a statement being bound: order maps
// TiDB's '?' marker order to PostgreSQL's $n.
type Params struct {
	order []int // marker order -> $n (1-based)
	types []types.Type
	// stmt maps AST offsets to positions in the user's text, for errors.
	stmt *front.Statement
	// sess is the session that runs the statement, for the functions of
	// sequences; nil where they cannot be called (views).
	sess Session
	// subquery binds a subquery of the statement (bind_subquery.go); nil
	// where subqueries cannot appear.
	// corr is the query around it.
	subquery func(q ast.ResultSetNode, corr *correlation) (plan.Node, error)
	// uids are the WITH queries whose aggregate the user named (a view's
	// WITH (uids = '...'), view_uids.go); named records those met.
	uids  map[string]bool
	named map[string]bool
	// ctx, while set, is the context of the statement being bound, and
	// ticks counts bindExpr calls (bind_cancel.go).
	ctx   context.Context
	ticks int
}

// at gives err the position of node in the statement text, if err is a
// SQL error without one.
func (p *Params) at(node ast.Node, err error) error {
	var e *sqlerr.Error
	if p == nil || p.stmt == nil || !errors.As(err, &e) || e.Position != 0 {
		return err
	}
	e.Position = p.stmt.Position(node.OriginTextPosition())
	return err
}

func (p *Params) param(order int) (*expr.Param, error) {
	if p == nil || order >= len(p.order) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "unexpected parameter marker")
	}
	n := p.order[order] - 1
	for len(p.types) <= n {
		p.types = append(p.types, types.Unknown)
	}
	return &expr.Param{N: n, T: p.types[n]}, nil
}

// noteParamTypes records types that binding inferred for parameters (an
// Unknown param cast to a type takes that type).
func (p *Params) note(e expr.Expr) {
	if p == nil {
		return
	}
	expr.Visit(e, func(x expr.Expr) {
		if q, ok := x.(*expr.Param); ok && q.T != types.Unknown && q.N < len(p.types) && p.types[q.N] == types.Unknown {
			p.types[q.N] = q.T
		}
	})
}

func containsAgg(n ast.Node) bool {
	return containsNode(n, func(n ast.Node) bool {
		_, ok := n.(*ast.AggregateFuncExpr)
		return ok
	})
}

// containsNode reports whether n has a node that match accepts, outside
// its subqueries (their aggregates and set-returning calls are their
// own).
func containsNode(n ast.Node, match func(ast.Node) bool) bool {
	v := &nodeFinder{match: match}
	n.Accept(v)
	return v.found
}

type nodeFinder struct {
	match func(ast.Node) bool
	found bool
}

func (v *nodeFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true
	}
	v.found = v.found || v.match(n)
	return n, v.found
}
func (v *nodeFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func (b *binder) bindExpr(n ast.ExprNode, s *scope) (expr.Expr, error) {
	if b.depth >= maxExprDepth {
		return nil, sqlerr.New(sqlerr.StatementTooComplex, "stack depth limit exceeded: expressions nest more than %d levels deep", maxExprDepth).
			WithHint("Simplify the expression: fewer nested parentheses or chained operators (a long IN list is fine).")
	}
	if err := b.stmt.tick(); err != nil {
		return nil, err
	}
	b.depth++
	defer func() { b.depth-- }()
	e, err := b.bindExprInner(n, s)
	if err == nil && b.depth == 1 {
		// Once per whole expression: noting at every level would walk
		// each subtree again, quadratic in the depth.
		b.stmt.note(e)
	}
	return e, err
}

func (b *binder) bindExprInner(n ast.ExprNode, s *scope) (expr.Expr, error) {
	if b.agg != nil && !b.inAgg {
		if a, ok := n.(*ast.AggregateFuncExpr); ok {
			return b.bindAggCall(a)
		}
		// A subquery binds in its own scope, over the groups; it is bound
		// over the input rows too only to match a GROUP BY key that is
		// the same subquery.
		sub := isSubqueryNode(n)
		if !containsAgg(n) && !containsWindow(n) && (!sub || b.agg.groupedBySubquery()) {
			inner := &binder{stmt: b.stmt, depth: b.depth, corr: b.corr}
			e, err := inner.bindExpr(n, b.agg.input)
			if err != nil && !sub {
				return nil, err
			}
			if err == nil {
				key := e.String()
				for i, g := range b.agg.groupStrs {
					if g == key {
						return &expr.ColRef{Idx: i, Name: key, T: b.agg.groupKeys[i].Type()}, nil
					}
				}
				// A constant (an outer query's column included) needs no
				// grouping.
				if expr.IsConstant(e) {
					return e, nil
				}
				if col, ok := n.(*ast.ColumnNameExpr); ok {
					// PostgreSQL names the column with its table.
					name := col.Name.Name.O
					if c, ok := e.(*expr.ColRef); ok && c.Idx < len(b.agg.input.cols) && b.agg.input.cols[c.Idx].qualifier() != "" {
						name = b.agg.input.cols[c.Idx].qualifier() + "." + b.agg.input.cols[c.Idx].name
					}
					return nil, sqlerr.New(sqlerr.GroupingError, "column %q must appear in the GROUP BY clause or be used in an aggregate function", name)
				}
			}
		}
	}
	switch n := n.(type) {
	case *ast.ParenthesesExpr:
		return b.bindExpr(n.Expr, s)
	case *ast.ColumnNameExpr:
		if n.Name.Schema.O == positionSchema {
			if i, err := strconv.Atoi(n.Name.Name.O); err == nil && i < len(s.cols) {
				return &expr.ColRef{Idx: i, Name: s.cols[i].name, T: s.cols[i].typ}, nil
			}
		}
		i, err := s.resolve(n.Name.Table.O, n.Name.Name.O)
		if err != nil && sqlerr.Code(err) == sqlerr.UndefinedColumn && b.corr != nil {
			if e, ok, err := b.corr.resolve(n); ok {
				return e, err
			}
		}
		if err != nil && sqlerr.Code(err) == sqlerr.UndefinedColumn {
			if e, ok := s.systemColumn(n.Name.Table.O, n.Name.Name.O); ok {
				return e, nil
			}
			if t := n.Name.Table.O; t != "" && !b.hasTable(s, t) {
				err = sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", t)
			}
		}
		if err != nil {
			return nil, b.stmt.at(n, err)
		}
		return &expr.ColRef{Idx: i, Name: s.cols[i].name, T: s.cols[i].typ}, nil
	case *test_driver.ParamMarkerExpr:
		return b.stmt.param(n.Order)
	case *test_driver.ValueExpr:
		return literal(n)
	case *ast.BinaryOperationExpr:
		return b.bindBinary(n, s)
	case *ast.UnaryOperationExpr:
		v, err := b.bindExpr(n.V, s)
		if err != nil {
			return nil, err
		}
		switch n.Op {
		case opcode.Not, opcode.Not2:
			return expr.Not(v)
		case opcode.Minus:
			if c, ok := v.(*expr.Const); ok && isNumberLiteral(n.V) {
				if f, ok := expr.NegateLiteral(c); ok {
					return f, nil
				}
			}
			return expr.Negate(v)
		case opcode.Plus:
			return v, nil
		case opcode.BitNeg:
			return expr.BitNot(v)
		}
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "unary operator %s is not supported", n.Op)
	case *ast.IsNullExpr:
		if fields, ok := rowFields(n.Expr); ok {
			return b.bindRowIsNull(fields, n.Not, s)
		}
		v, err := b.bindExpr(n.Expr, s)
		if err != nil {
			return nil, err
		}
		return expr.IsNull(v, n.Not), nil
	case *ast.IsTruthExpr:
		v, err := b.bindExpr(n.Expr, s)
		if err != nil {
			return nil, err
		}
		return expr.IsTruth(v, n.True != 0, n.Not)
	case *ast.PatternLikeOrIlikeExpr:
		l, err := b.bindExpr(n.Expr, s)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(n.Pattern, s)
		if err != nil {
			return nil, err
		}
		op := "LIKE"
		if !n.IsLike {
			op = "ILIKE"
		}
		if n.EscapeExplicit && n.Escape != '\\' {
			if r, err = withLikeEscape(r, n.Escape); err != nil {
				return nil, err
			}
		}
		if l, err = b.padFixed(l, s); err != nil {
			return nil, err
		}
		e, err := expr.Binary(op, l, r)
		if err != nil || !n.Not {
			return e, err
		}
		return expr.Not(e)
	case *ast.PatternInExpr:
		if n.Sel != nil {
			return b.bindInSubquery(n, s)
		}
		if isRowOperand(n.Expr) || (len(n.List) > 0 && isRowOperand(n.List[0])) {
			return b.bindRowIn(n, s)
		}
		l, err := b.bindExpr(n.Expr, s)
		if err != nil {
			return nil, err
		}
		list := make([]expr.Expr, len(n.List))
		for i, item := range n.List {
			if list[i], err = b.bindExpr(item, s); err != nil {
				return nil, err
			}
			if b.fixedMod(l, s).Fixed {
				if list[i], err = b.asBpchar(list[i], s); err != nil {
					return nil, err
				}
			}
		}
		return expr.In(l, list, n.Not)
	case *ast.BetweenExpr:
		v, err := b.bindExpr(n.Expr, s)
		if err != nil {
			return nil, err
		}
		lo, err := b.bindExpr(n.Left, s)
		if err != nil {
			return nil, err
		}
		hi, err := b.bindExpr(n.Right, s)
		if err != nil {
			return nil, err
		}
		vlo, lo, err := b.bpcharOperands(">=", v, lo, s)
		if err != nil {
			return nil, err
		}
		vhi, hi, err := b.bpcharOperands("<=", v, hi, s)
		if err != nil {
			return nil, err
		}
		ge, err := expr.Binary(">=", vlo, lo)
		if err != nil {
			return nil, err
		}
		le, err := expr.Binary("<=", vhi, hi)
		if err != nil {
			return nil, err
		}
		both, err := expr.Binary("AND", ge, le)
		if err != nil || !n.Not {
			return both, err
		}
		return expr.Not(both)
	case *ast.CaseExpr:
		return b.bindCase(n, s)
	case *ast.FuncCallExpr:
		return b.bindFuncCall(n, s)
	case *ast.AggregateFuncExpr:
		return nil, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed here")
	case *ast.TimeUnitExpr:
		return &expr.Const{D: types.NewString(strings.ToLower(n.Unit.String())), T: types.Text}, nil
	case *ast.WindowFuncExpr:
		return b.bindWindowRef(n, s)
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return b.bindScalarOrExists(n, s)
	case *ast.CompareSubqueryExpr:
		return b.bindCompareSubquery(n, s)
	case *ast.RowExpr:
		return nil, errRowHere()
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "expression %T is not supported", n)
}

var binaryOps = map[opcode.Op]string{
	opcode.Plus: "+", opcode.Minus: "-", opcode.Mul: "*", opcode.Div: "/", opcode.Mod: "%", opcode.IntDiv: "/",
	opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">=",
	opcode.NullEQ: "<=>", opcode.LogicAnd: "AND", opcode.LogicOr: "OR",
	// The front layer hands PostgreSQL's # (xor) on as ^.
	opcode.And: "&", opcode.Or: "|", opcode.Xor: "#", opcode.LeftShift: "<<", opcode.RightShift: ">>",
}

func (b *binder) bindBinary(n *ast.BinaryOperationExpr, s *scope) (expr.Expr, error) {
	if isRowOperand(n.L) || isRowOperand(n.R) {
		return b.bindRowCompare(n.Op, n.L, n.R, s)
	}
	op, ok := binaryOps[n.Op]
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "operator %s is not supported", n.Op)
	}
	l, err := b.bindExpr(n.L, s)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(n.R, s)
	if err != nil {
		return nil, err
	}
	if l, r, err = b.bpcharOperands(op, l, r, s); err != nil {
		return nil, err
	}
	return expr.Binary(op, l, r)
}

func (b *binder) bindCase(n *ast.CaseExpr, s *scope) (expr.Expr, error) {
	var value expr.Expr
	var err error
	if n.Value != nil {
		if value, err = b.bindExpr(n.Value, s); err != nil {
			return nil, err
		}
	}
	conds := make([]expr.Expr, len(n.WhenClauses))
	results := make([]expr.Expr, len(n.WhenClauses))
	for i, w := range n.WhenClauses {
		c, err := b.bindExpr(w.Expr, s)
		if err != nil {
			return nil, err
		}
		if value != nil {
			v, cv, err := b.bpcharOperands("=", value, c, s)
			if err != nil {
				return nil, err
			}
			if c, err = expr.Binary("=", v, cv); err != nil {
				return nil, err
			}
		}
		conds[i] = c
		if results[i], err = b.bindExpr(w.Result, s); err != nil {
			return nil, err
		}
	}
	var els expr.Expr
	if n.ElseClause != nil {
		if els, err = b.bindExpr(n.ElseClause, s); err != nil {
			return nil, err
		}
	}
	return expr.Case(conds, results, els)
}

func (b *binder) bindFuncCall(n *ast.FuncCallExpr, s *scope) (expr.Expr, error) {
	name := n.FnName.L
	if isSRFCall(n) {
		// The select list and FROM take them out before binding
		// (bind_srf_select.go, bind_srf_from.go); anywhere else PostgreSQL
		// refuses them too.
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "set-returning function %s() is allowed only in FROM and at the top of a select-list item", name).
			WithHint("You might be able to move the set-returning function into a LATERAL FROM item.")
	}
	if e, ok, err := b.bindRowJSON(n, s); ok {
		return e, err
	}
	args := make([]expr.Expr, len(n.Args))
	for i, a := range n.Args {
		var err error
		if args[i], err = b.bindExpr(a, s); err != nil {
			return nil, err
		}
	}
	if err := b.padFixedArgs(name, args, s); err != nil {
		return nil, err
	}
	if seq, ok := strings.CutPrefix(name, front.SequenceFuncPrefix); ok && sequenceFuncNames[seq] {
		return b.sequenceCall(seq, args)
	}
	switch name {
	case front.CastFunc:
		if len(args) != 2 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "malformed cast")
		}
		c, ok := args[1].(*expr.Const)
		if !ok {
			return nil, sqlerr.New(sqlerr.SyntaxError, "malformed cast")
		}
		if strings.EqualFold(strings.TrimSpace(c.D.S), "jsonpath") {
			return expr.JSONPathCast(args[0])
		}
		t, mod, err := types.ParseWithModifier(c.D.S)
		if err != nil {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "%s", err.Error())
		}
		if t == types.Bytea {
			// character(n) to bytea goes through its text output, padded.
			if args[0], err = b.padFixed(args[0], s); err != nil {
				return nil, err
			}
		}
		return expr.CastWithModifier(args[0], t, mod, true)
	case front.IntervalFunc:
		if len(args) != 1 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "malformed interval literal")
		}
		return expr.Cast(args[0], types.Interval)
	case "coalesce":
		return expr.Coalesce(args)
	case "ifnull":
		return expr.Coalesce(args)
	case "nullif":
		if len(args) != 2 {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "function nullif requires two arguments")
		}
		if b.fixedMod(args[0], s).Fixed {
			var err error
			if args[1], err = b.asBpchar(args[1], s); err != nil {
				return nil, err
			}
		}
		return expr.NullIf(args[0], args[1])
	case "concat": // what the TiDB parser makes of a || b
		if len(args) == 2 {
			return expr.Binary("||", args[0], args[1])
		}
		return expr.Call("concat", args)
	case front.ConcatFunc: // concat() as the user wrote it
		return expr.Call("concat", args)
	case "bool_and", "bool_or", "every":
		return nil, sqlerr.New(sqlerr.GroupingError, "aggregate function %s is not allowed here", name)
	case "date":
		return dateCall(args)
	}
	return expr.Call(name, args)
}

// aggregateSynonyms are aggregates PostgreSQL defines as others: the
// AST keeps the name the user wrote, which names the output column.
var aggregateSynonyms = map[string]string{"every": "bool_and", "stddev": "stddev_samp", "variance": "var_samp"}

// unknownAggArgType is the type an untyped literal argument (NULL, 'x')
// of aggregate fn takes, as PostgreSQL resolves it: the statistical
// aggregates exist for numeric types only, so float8 (the preferred type
// of that category); bool_and and bool_or for boolean only; text
// otherwise (count takes any type; sum, avg, min and max over unknown
// stay errors of their own).
func unknownAggArgType(fn string) types.Type {
	switch fn {
	case "var_pop", "var_samp", "stddev_pop", "stddev_samp":
		return types.Float8
	case "bool_and", "bool_or":
		return types.Bool
	}
	return types.Text
}

// timeAggArg casts a time argument of sum or avg to interval: PostgreSQL
// has no sum(time) and resolves the call through time's implicit cast to
// interval (sum(time '01:00') is interval '01:00:00').
func timeAggArg(fn string, arg expr.Expr) (expr.Expr, error) {
	if (fn == "sum" || fn == "avg") && arg.Type() == types.Time {
		return expr.Cast(arg, types.Interval)
	}
	return arg, nil
}

func (b *binder) bindAggCall(a *ast.AggregateFuncExpr) (expr.Expr, error) {
	fn := strings.ToLower(a.F)
	if s, ok := aggregateSynonyms[fn]; ok {
		fn = s
	}
	call := plan.AggCall{Func: fn, Distinct: a.Distinct}
	switch fn {
	case "count", "sum", "min", "max", "avg", "bool_and", "bool_or",
		"var_pop", "var_samp", "stddev_pop", "stddev_samp":
	case "percentile_cont", "percentile_disc", "mode", "string_agg", "array_agg", "jsonb_agg", "jsonb_object_agg", "json_agg", "json_object_agg":
		var err error
		if call, err = b.orderedAggCall(fn, a); err != nil {
			return nil, err
		}
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "aggregate function %s is not supported", fn)
	}
	star := fn == "count" && len(a.Args) == 1 && isCountStar(a.Args[0])
	if !star && call.Arg == nil {
		if len(a.Args) != 1 {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s takes exactly one argument", fn)
		}
		inner := &binder{stmt: b.stmt, inAgg: true, corr: b.corr}
		arg, err := inner.bindExpr(a.Args[0], b.agg.input)
		if err != nil {
			return nil, err
		}
		if err := checkAggLevel(fn, arg); err != nil {
			return nil, err
		}
		if arg.Type() == types.Unknown {
			if arg, err = expr.Cast(arg, unknownAggArgType(fn)); err != nil {
				return nil, err
			}
		}
		if arg, err = timeAggArg(fn, arg); err != nil {
			return nil, err
		}
		call.Arg = arg
	}
	argType := types.Unknown
	if call.Arg != nil {
		argType = call.Arg.Type()
	}
	t, err := exec.AggResultType(call.Func, argType)
	if err != nil {
		if _, ok := aggregateSynonyms[strings.ToLower(a.F)]; ok {
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", strings.ToLower(a.F), argType)
		}
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "%s", err.Error())
	}
	call.T = t
	key := call.String()
	idx := -1
	for i, k := range b.agg.callStrs {
		if k == key {
			idx = i
		}
	}
	if idx < 0 {
		idx = len(b.agg.calls)
		b.agg.calls = append(b.agg.calls, call)
		b.agg.callStrs = append(b.agg.callStrs, key)
	}
	return &expr.ColRef{Idx: len(b.agg.groupKeys) + idx, Name: key, T: t}, nil
}

// isCountStar recognises the argument TiDB gives count(*).
func isCountStar(n ast.ExprNode) bool {
	v, ok := n.(*test_driver.ValueExpr)
	return ok && v.Kind() == test_driver.KindInt64 && v.GetInt64() == 1 && v.Type.GetFlag()&mysql.IsBooleanFlag == 0
}

// literal converts a TiDB literal to a constant with PostgreSQL's typing:
// string literals are of unknown type until context decides.
func literal(v *test_driver.ValueExpr) (expr.Expr, error) {
	switch v.Kind() {
	case test_driver.KindNull:
		return &expr.Const{D: types.Null, T: types.Unknown}, nil
	case test_driver.KindInt64:
		i := v.GetInt64()
		if v.Type.GetFlag()&mysql.IsBooleanFlag != 0 {
			return &expr.Const{D: types.NewBool(i != 0), T: types.Bool}, nil
		}
		if i >= -1<<31 && i < 1<<31 {
			return &expr.Const{D: types.NewInt(i), T: types.Int4}, nil
		}
		return &expr.Const{D: types.NewInt(i), T: types.Int8}, nil
	case test_driver.KindUint64:
		u := v.GetUint64()
		if u <= 1<<63-1 {
			return &expr.Const{D: types.NewInt(int64(u)), T: types.Int8}, nil
		}
		d, err := types.ParseText(strconv.FormatUint(u, 10), types.Numeric)
		return &expr.Const{D: d, T: types.Numeric}, err
	case test_driver.KindFloat32, test_driver.KindFloat64, test_driver.KindMysqlDecimal:
		text := strconv.FormatFloat(v.GetFloat64(), 'g', -1, 64)
		if v.Kind() == test_driver.KindMysqlDecimal {
			text = v.GetMysqlDecimal().String()
		}
		d, err := types.ParseText(text, types.Numeric)
		if err != nil {
			return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "%s", err.Error())
		}
		return &expr.Const{D: d, T: types.Numeric}, nil
	case test_driver.KindString, test_driver.KindBytes:
		return &expr.Const{D: types.NewString(v.GetString()), T: types.Unknown}, nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "literal %s is not supported", v.GetDatumString())
}

// NumberParamMarkers sets each '?' marker's Order to its rank by position
// in the text, which is how front.Statement.Params is indexed. (The TiDB
// parser leaves Order for its own planner to fill in.)
func NumberParamMarkers(n ast.Node) {
	v := &markerCollector{}
	n.Accept(v)
	sort.Slice(v.markers, func(i, j int) bool { return v.markers[i].Offset < v.markers[j].Offset })
	for i, m := range v.markers {
		m.Order = i
	}
}

type markerCollector struct {
	markers []*test_driver.ParamMarkerExpr
}

func (v *markerCollector) Enter(n ast.Node) (ast.Node, bool) {
	if m, ok := n.(*test_driver.ParamMarkerExpr); ok {
		v.markers = append(v.markers, m)
	}
	return n, false
}
func (v *markerCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// aggregateFuncs are aggregates the TiDB parser reads as plain function
// calls (MySQL has no such aggregates).
var aggregateFuncs = map[string]string{"bool_and": "bool_and", "bool_or": "bool_or", "every": "every",
	front.StddevFunc: "stddev", front.VarianceFunc: "variance",
	"percentile_cont": "percentile_cont", "percentile_disc": "percentile_disc", front.ModeFunc: "mode", "string_agg": "string_agg",
	"array_agg": "array_agg", "jsonb_agg": "jsonb_agg", "jsonb_object_agg": "jsonb_object_agg",
	"json_agg": "json_agg", "json_object_agg": "json_object_agg"}

// normalizeAggregates rewrites calls of aggregateFuncs into aggregate nodes.
func normalizeAggregates(n ast.Node) {
	n.Accept(&aggNormalizer{})
}

type aggNormalizer struct{}

func (v *aggNormalizer) Enter(n ast.Node) (ast.Node, bool) { return n, false }
func (v *aggNormalizer) Leave(n ast.Node) (ast.Node, bool) {
	if f, ok := n.(*ast.FuncCallExpr); ok {
		if name, ok := aggregateFuncs[f.FnName.L]; ok {
			args, distinct := f.Args, false
			if len(args) > 0 {
				if d, ok := args[0].(*ast.FuncCallExpr); ok && d.FnName.L == front.AggDistinctFunc && len(d.Args) == 1 {
					args, distinct = append([]ast.ExprNode{d.Args[0]}, args[1:]...), true
				}
			}
			return &ast.AggregateFuncExpr{F: name, Args: args, Distinct: distinct}, true
		}
	}
	return n, true
}

// dateCall is PostgreSQL's date(x): the functions date(timestamp) and
// date(timestamptz), which an untyped literal reaches as timestamptz, and
// otherwise, as PostgreSQL reads a call named after a type with one
// argument, the cast x::date (date(text) works, date(integer) does not).
func dateCall(args []expr.Expr) (expr.Expr, error) {
	if len(args) == 1 {
		arg := args[0]
		if arg.Type() == types.Unknown {
			var err error
			if arg, err = expr.Cast(arg, types.Timestamptz); err != nil {
				return nil, err
			}
		}
		if e, err := expr.Cast(arg, types.Date); sqlerr.Code(err) != sqlerr.CannotCoerce {
			return e, err
		}
	}
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Type().String()
	}
	return nil, sqlerr.New(sqlerr.UndefinedFunction, "function date(%s) does not exist", strings.Join(names, ", ")).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}
