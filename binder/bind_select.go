package binder

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/pgcatalog"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// whereTracer is a catalog that watches the WHERE rules rewrite each
// filter (OfflineCatalog, for data-driven tests of the rules).
type whereTracer interface {
	whereTrace(f *plan.Filter) func(rule string, after plan.Node)
}

// selectBinder binds one SELECT into a logical plan.
type selectBinder struct {
	cat    Catalog
	params *Params
	ctes   map[string]*ast.CommonTableExpression // WITH queries in scope
	// unionBranch is set while a branch of UNION is bound: its untyped
	// literals (NULL, 'text') stay of unknown type so that the UNION
	// resolves them with the other branches' types, as PostgreSQL does.
	unionBranch bool
	// work are the working tables of the recursive CTEs being bound.
	work map[string]*workTable
	// corr is the query around this one when it is a subquery in an
	// expression: columns not found here are looked up there.
	corr *correlation
	// lateral is set while the subquery of a LATERAL FROM item is bound:
	// its LIMIT and OFFSET may read the FROM items before it (corr), and
	// are then read once per outer row when it runs (sql/lateral_run.go).
	lateral bool
}

// bindSelect returns the plan of a SELECT. Its schema is the visible
// output columns.
func (sb *selectBinder) bindSelect(sel *ast.SelectStmt) (plan.Node, error) {
	if err := sb.params.interrupted(); err != nil {
		return nil, err
	}
	sel, distinctOn := splitDistinctOn(sel)
	sel, err := expandRowOrderBy(sel, distinctOn != nil)
	if err != nil {
		return nil, err
	}
	restore, err := sb.withCTEs(sel.With)
	defer restore()
	if err != nil {
		return nil, err
	}
	unionBranch := sb.unionBranch
	sb.unionBranch = false // subqueries of this branch are not branches
	defer func() { sb.unionBranch = unionBranch }()
	if sel.LockInfo != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "SELECT ... FOR UPDATE is not supported")
	}
	if call, ok := rowsFromCall(sel); ok {
		return sb.bindRowsFrom(call)
	}
	var input plan.Node
	in := &scope{}
	if sel.From != nil {
		if input, in, err = sb.bindFrom(sel.From.TableRefs); err != nil {
			return nil, err
		}
	} else {
		input = &plan.Values{Rows: [][]expr.Expr{{}}, Cols: nil}
	}
	b := &binder{stmt: sb.params, corr: sb.corr}

	if sel.Where != nil {
		if containsAgg(sel.Where) {
			return nil, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in WHERE")
		}
		if containsWindow(sel.Where) {
			return nil, sqlerr.New(sqlerr.WindowingError, "window functions are not allowed in WHERE")
		}
		cond, err := b.bindExpr(sel.Where, in)
		if err != nil {
			return nil, err
		}
		if cond, err = BooleanCondition(cond, "WHERE"); err != nil {
			return nil, err
		}
		f := &plan.Filter{Input: input, Cond: cond}
		var trace func(rule string, after plan.Node)
		if t, ok := sb.cat.(whereTracer); ok {
			trace = t.whereTrace(f)
		}
		input = plan.RewriteWhere(f, trace)
	}
	input, in, restoreSRFs, err := sb.bindSelectSRFs(sel, input, in)
	defer restoreSRFs()
	if err != nil {
		return nil, err
	}

	// Expand the select list (wildcards) into fields.
	type field struct {
		node ast.ExprNode
		name string
	}
	var fields []field
	plainSelect := sel.GroupBy == nil && sel.Having == nil
	for _, f := range sel.Fields.Fields {
		plainSelect = plainSelect && (f.Expr == nil || !containsAgg(f.Expr) && !containsWindow(f.Expr))
	}
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			t := f.WildCard.Table.O
			n := 0
			for i, c := range in.cols {
				if (t == "" && !c.hidden) || (t != "" && c.table == t) {
					ref := &ast.ColumnName{Table: ast.NewCIStr(c.table), Name: ast.NewCIStr(c.name)}
					if plainSelect && ambiguousIn(in, c) {
						// Two columns of one name (unnest(a, b), a
						// derived table's a, a): * reads each by position.
						ref = &ast.ColumnName{Schema: ast.NewCIStr(positionSchema), Name: ast.NewCIStr(strconv.Itoa(i))}
					}
					fields = append(fields, field{node: &ast.ColumnNameExpr{Name: ref}, name: c.name})
					n++
				}
			}
			if t != "" && n == 0 {
				return nil, sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", t)
			}
			continue
		}
		if call, ok := f.Expr.(*ast.FuncCallExpr); ok && call.FnName.L == front.NoColumnsFunc {
			continue // an empty select list: rows of no columns
		}
		name := f.AsName.O
		if name == "" {
			name = ColumnName(f.Expr)
		}
		fields = append(fields, field{node: f.Expr, name: name})
	}

	hasAgg := sel.GroupBy != nil || sel.Having != nil
	for _, f := range fields {
		hasAgg = hasAgg || containsAgg(f.node)
	}
	if sel.OrderBy != nil {
		for _, item := range sel.OrderBy.Items {
			hasAgg = hasAgg || containsAgg(item.Expr)
		}
	}
	for i := range sel.WindowSpecs {
		hasAgg = hasAgg || containsAgg(&sel.WindowSpecs[i])
	}
	for _, n := range distinctOn {
		hasAgg = hasAgg || containsAgg(n)
	}

	// resolveAlias lets GROUP BY and ORDER BY name an output column by its
	// alias or 1-based position, as PostgreSQL allows. A bare name in GROUP
	// BY is an input column when there is one (orderByName takes output
	// columns first for ORDER BY).
	resolveAlias := func(n ast.ExprNode, clause string) (int, bool, error) {
		n = stripParens(n)
		if err := nonIntegerConstant(n, clause); err != nil {
			return 0, false, err
		}
		if i, ok := positionOf(n); ok {
			if i < 1 || i > len(fields) {
				return 0, false, sqlerr.New(sqlerr.InvalidColumnReference, "%s position %d is not in select list", clause, i)
			}
			return i - 1, true, nil
		}
		if c, ok := n.(*ast.ColumnNameExpr); ok && c.Name.Table.O == "" {
			if _, err := in.resolve("", c.Name.Name.O); err == nil {
				return 0, false, nil // an input column wins, as in PostgreSQL's GROUP BY
			}
			for i, f := range fields {
				if f.name == c.Name.Name.O {
					return i, true, nil
				}
			}
		}
		return 0, false, nil
	}

	// Ranking window functions add their ranks as hidden columns of the
	// input.
	var ranked []rankingItem
	for _, f := range fields {
		ranked = append(ranked, rankingItem{node: f.node, name: f.name})
	}
	if sel.OrderBy != nil {
		for _, item := range sel.OrderBy.Items {
			ranked = append(ranked, rankingItem{node: item.Expr})
		}
	}
	if !hasAgg {
		if input, in, err = sb.bindRankings(b, ranked, sel.WindowSpecs, input, in); err != nil {
			return nil, err
		}
	}

	exprScope := in
	var windows *groupedWindows
	if hasAgg {
		ac := &aggContext{input: in}
		if sel.GroupBy != nil {
			for _, item := range sel.GroupBy.Items {
				node := item.Expr
				if i, ok, err := resolveAlias(node, "GROUP BY"); err != nil {
					return nil, err
				} else if ok {
					node = fields[i].node
				}
				if containsAgg(node) {
					return nil, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in GROUP BY")
				}
				g, err := b.bindExpr(node, in)
				if err != nil {
					return nil, err
				}
				ac.groupKeys = append(ac.groupKeys, g)
				ac.groupStrs = append(ac.groupStrs, g.String())
			}
		}
		if len(ac.groupKeys) > 0 {
			nodes := make([]ast.Node, 0, len(fields)+1)
			for _, f := range fields {
				nodes = append(nodes, f.node)
			}
			if sel.Having != nil {
				nodes = append(nodes, sel.Having.Expr)
			}
			if sel.OrderBy != nil {
				for _, item := range sel.OrderBy.Items {
					nodes = append(nodes, item.Expr)
				}
			}
			b.addDependentGroupKeys(ac, nodes)
		}
		b.agg = ac
		// Bind everything above the aggregate first so that all calls are
		// collected; the Aggregate node is built after.
		defer func() { b.agg = nil }()
		if windows, err = sb.bindGroupedWindows(b, ranked, sel.WindowSpecs); err != nil {
			return nil, err
		}
	}

	exprs := make([]expr.Expr, len(fields))
	cols := make([]types.Column, len(fields))
	for i, f := range fields {
		e, err := b.bindExpr(f.node, exprScope)
		if err != nil {
			return nil, err
		}
		if _, literal := e.(*expr.Const); e.Type() == types.Unknown && !(unionBranch && literal && !hasAgg && !sel.Distinct) {
			if e, err = expr.Cast(e, types.Text); err != nil {
				return nil, err
			}
		}
		exprs[i] = e
		cols[i] = types.Column{Name: f.name, Type: e.Type(), Mod: b.fixedMod(e, exprScope)}
	}
	var having expr.Expr
	if sel.Having != nil {
		if containsWindow(sel.Having.Expr) {
			return nil, sqlerr.New(sqlerr.WindowingError, "window functions are not allowed in HAVING")
		}
		h, err := b.bindExpr(sel.Having.Expr, exprScope)
		if err != nil {
			return nil, err
		}
		if having, err = BooleanCondition(h, "HAVING"); err != nil {
			return nil, err
		}
	}
	// ORDER BY items: an output column, or an extra hidden column. As in
	// PostgreSQL, a bare name is an output column when one has that name
	// (SQL92), and any other expression reads the input columns (SQL99).
	orderByName := func(n ast.ExprNode) (int, bool, error) {
		c, ok := stripParens(n).(*ast.ColumnNameExpr)
		if !ok || c.Name.Table.O != "" || c.Name.Schema.O != "" {
			return 0, false, nil
		}
		idx := -1
		for i, f := range fields {
			if f.name != c.Name.Name.O {
				continue
			}
			if idx < 0 {
				idx = i
			} else if !sameExpr(exprs[i], exprs[idx]) {
				return 0, false, sqlerr.New(sqlerr.AmbiguousColumn, "ORDER BY %q is ambiguous", c.Name.Name.O).
					WithHint("Name the column by its position in the select list, or give the output columns different names.")
			}
		}
		return idx, idx >= 0, nil
	}
	hidden := 0
	// sortItem returns the column of an ORDER BY (or DISTINCT ON) item,
	// adding a hidden one for an expression the select list does not have.
	sortItem := func(n ast.ExprNode, clause string) (int, error) {
		idx, ok, err := orderByName(n)
		if err == nil && !ok {
			idx, ok, err = resolveAlias(n, clause)
		}
		if err != nil {
			return 0, err
		}
		if !ok {
			node := n
			// The front layer writes NULLS FIRST/LAST on a name as
			// (name) IS NULL before the name itself: that name is
			// resolved as the bare one is.
			if isNull, ok := node.(*ast.IsNullExpr); ok && !isNull.Not {
				if p, ok := isNull.Expr.(*ast.ParenthesesExpr); ok {
					i, ok, err := orderByName(p.Expr)
					if err != nil {
						return 0, err
					}
					if ok {
						node = &ast.IsNullExpr{Expr: &ast.ParenthesesExpr{Expr: fields[i].node}}
					}
				}
			}
			e, err := b.bindExpr(node, exprScope)
			if err != nil {
				return 0, err
			}
			idx = -1
			for j, x := range exprs {
				if sameExpr(x, e) {
					idx = j
					break
				}
			}
			if idx < 0 {
				idx = len(exprs)
				exprs = append(exprs, e)
				cols = append(cols, types.Column{Name: fmt.Sprintf("?sort%d?", hidden), Type: e.Type()})
				hidden++
			}
		}
		return idx, nil
	}
	var sortKeys []plan.SortKey
	var sortCols []int
	if sel.OrderBy != nil {
		for _, item := range sel.OrderBy.Items {
			idx, err := sortItem(item.Expr, "ORDER BY")
			if err != nil {
				return nil, err
			}
			sortCols = append(sortCols, idx)
			sortKeys = append(sortKeys, plan.SortKey{Expr: &expr.ColRef{Idx: idx, Name: cols[idx].Name, T: cols[idx].Type}, Desc: item.Desc})
		}
	}
	var distinctCols []int
	for _, n := range distinctOn {
		idx, err := sortItem(n, "DISTINCT ON")
		if err != nil {
			return nil, err
		}
		distinctCols = append(distinctCols, idx)
	}
	if distinctOn != nil {
		if err := checkDistinctOnOrder(distinctCols, sortCols, sel.OrderBy); err != nil {
			return nil, err
		}
	}

	if b.agg != nil {
		aggCols := make([]types.Column, 0, len(b.agg.groupKeys)+len(b.agg.calls))
		for _, g := range b.agg.groupKeys {
			aggCols = append(aggCols, types.Column{Name: g.String(), Type: g.Type()})
		}
		for _, c := range b.agg.calls {
			aggCols = append(aggCols, types.Column{Name: c.Func, Type: c.T})
		}
		input = &plan.Aggregate{Input: input, GroupBy: b.agg.groupKeys, Aggs: b.agg.calls, Cols: aggCols}
		if having != nil {
			input = &plan.Filter{Input: input, Cond: having}
		}
		if len(windows.nodes) > 0 {
			width := len(input.Schema())
			input = windows.stack(input)
			for i, e := range exprs {
				exprs[i] = placeWindows(e, width)
			}
		}
	}
	var out plan.Node = &plan.Project{Input: input, Exprs: exprs, Cols: cols}
	visible := len(cols) - hidden
	if distinctOn != nil {
		out = distinctOnTop1(out, distinctCols, sortKeys)
	}
	if sel.Distinct {
		if hidden > 0 {
			return nil, sqlerr.New(sqlerr.InvalidColumnReference, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
		}
		keys := make([]expr.Expr, len(cols))
		for i, c := range cols {
			keys[i] = &expr.ColRef{Idx: i, Name: c.Name, T: c.Type}
		}
		out = &plan.Aggregate{Input: out, GroupBy: keys, Cols: cols}
	}
	if len(sortKeys) > 0 {
		out = &plan.Sort{Input: out, Keys: sortKeys}
	}
	if sel.Limit != nil {
		l, err := sb.bindLimit(sel.Limit, in)
		if err != nil {
			return nil, err
		}
		l.Input = out
		out = l
	}
	if hidden > 0 {
		keep := make([]expr.Expr, visible)
		for i := range keep {
			keep[i] = &expr.ColRef{Idx: i, Name: cols[i].Name, T: cols[i].Type}
		}
		out = &plan.Project{Input: out, Exprs: keep, Cols: cols[:visible]}
	}
	return out, nil
}

// bindLimit reads LIMIT and OFFSET as PostgreSQL does: each is an
// expression without column references of its own query (own is the
// query's FROM scope, nil for none), cast to bigint; LIMIT NULL is no
// limit and OFFSET NULL is 0; a negative one is an error. One that holds
// a parameter, a subquery or, in a LATERAL subquery, a column of the
// FROM items before it is kept as an expression, read when the query
// runs (ResolveLimits, per outer row for the LATERAL one). The returned
// Limit has no Input.
func (sb *selectBinder) bindLimit(l *ast.Limit, own *scope) (*plan.Limit, error) {
	out := &plan.Limit{Count: -1}
	if own == nil {
		own = &scope{}
	}
	read := func(n ast.ExprNode, clause string) (int64, bool, expr.Expr, error) {
		if v, ok := n.(*test_driver.ValueExpr); ok && (v.Kind() == test_driver.KindInt64 || v.Kind() == test_driver.KindUint64) && !isBoolLiteral(v) {
			return v.GetInt64(), true, nil, nil // 18446744073709551615 (no limit, from the front layer) reads as -1
		}
		if containsAgg(n) {
			return 0, false, nil, sqlerr.New(sqlerr.GroupingError, "aggregate functions are not allowed in %s", clause)
		}
		b := &binder{stmt: sb.params, corr: sb.corr}
		e, err := b.bindExpr(n, own)
		if err != nil {
			return 0, false, nil, err
		}
		if t := e.Type(); t != types.Unknown && !t.IsNumeric() {
			return 0, false, nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of %s must be type bigint, not type %s", clause, t)
		}
		if e, err = expr.Cast(e, types.Int8); err != nil {
			return 0, false, nil, err
		}
		sb.params.note(e) // LIMIT $1 makes $1 a bigint
		constant, local, outer := true, false, false
		expr.Visit(e, func(x expr.Expr) {
			switch x.(type) {
			case *expr.ColRef:
				local = true
			case *expr.OuterRef:
				outer, constant = true, false
			case *expr.Param, *expr.Subquery:
				constant = false
			}
		})
		if local {
			return 0, false, nil, sqlerr.New(sqlerr.InvalidColumnReference, "argument of %s must not contain variables", clause).
				WithHint("Compute the count first and write it as a number, a parameter or an uncorrelated subquery.")
		}
		if outer && !sb.lateral {
			return 0, false, nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s that refers to the outer query is supported only in a LATERAL subquery", clause).
				WithHint("Move the subquery to FROM as a LATERAL one, or write the count as a number, a parameter or an uncorrelated subquery.")
		}
		if !constant {
			return 0, false, e, nil
		}
		count, ok, err := limitValue(e, clause)
		return count, ok, nil, err
	}
	if l.Count != nil {
		c, ok, e, err := read(l.Count, "LIMIT")
		if err != nil {
			return nil, err
		}
		if ok {
			out.Count = c
		}
		out.CountExpr = e
	}
	if l.Offset != nil {
		o, _, e, err := read(l.Offset, "OFFSET")
		if err != nil {
			return nil, err
		}
		out.Offset, out.OffsetExpr = o, e
	}
	return out, nil
}

// limitValue evaluates e, the bigint LIMIT or OFFSET (clause) of a query:
// ok is false for NULL (no limit, no offset).
func limitValue(e expr.Expr, clause string) (int64, bool, error) {
	d, err := e.Eval(nil)
	if err != nil {
		return 0, false, err
	}
	if d.IsNull() {
		return 0, false, nil
	}
	if d.I < 0 {
		code := sqlerr.InvalidRowCountInLimitClause
		if clause == "OFFSET" {
			code = sqlerr.InvalidRowCountInResultOffset
		}
		return 0, false, sqlerr.New(code, "%s must not be negative", clause)
	}
	return d.I, true, nil
}

// ResolveLimits returns a copy of n in which each LIMIT and OFFSET kept
// as an expression is read, and each LIMIT of zero rows is an empty
// VALUES (bind_zero_limit.go): run after the query's parameters are bound
// and its subqueries resolved. The right side of a lateral join is left
// as it is: its LIMIT may read the outer row, and it is resolved each
// time it runs, with the outer values bound (sql/lateral_run.go).
func ResolveLimits(n plan.Node) (plan.Node, error) {
	return MapPlanNodes(n, nil, func(n plan.Node) (plan.Node, bool, error) {
		if lj, ok := n.(*LateralJoin); ok {
			left, err := ResolveLimits(lj.Left)
			out := *lj
			out.Left = left
			return &out, true, err
		}
		l, ok := n.(*plan.Limit)
		if !ok {
			return n, false, nil
		}
		out := &plan.Limit{Count: l.Count, Offset: l.Offset, WithTies: l.WithTies}
		if l.CountExpr != nil {
			c, ok, err := limitValue(l.CountExpr, "LIMIT")
			if err != nil {
				return nil, true, err
			}
			out.Count = -1
			if ok {
				out.Count = c
			}
		}
		if l.OffsetExpr != nil {
			var err error
			if out.Offset, _, err = limitValue(l.OffsetExpr, "OFFSET"); err != nil {
				return nil, true, err
			}
		}
		if out.Count == 0 {
			return emptyLike(l), true, nil
		}
		in, err := ResolveLimits(l.Input)
		if err != nil {
			return nil, true, err
		}
		out.Input = in
		return out, true, nil
	})
}

// bindFrom binds a FROM clause: tables, views, streams and subqueries,
// joined.
func (sb *selectBinder) bindFrom(j *ast.Join) (plan.Node, *scope, error) {
	left, ls, err := sb.bindFromItem(j.Left)
	if err != nil {
		return nil, nil, err
	}
	if j.Right == nil {
		return left, ls, nil
	}
	if ts, ok := j.Right.(*ast.TableSource); ok && ts.Lateral {
		if !outerLateral(j) {
			return sb.bindLateral(j, left, ls, ts)
		}
		// RIGHT or FULL JOIN LATERAL: a subquery that refers to none of
		// the FROM items before it is an ordinary one.
		refers, err := sb.lateralRefers(ls, ts)
		if err != nil {
			return nil, nil, err
		}
		if refers {
			return nil, nil, errOuterLateral()
		}
		plain := *ts
		plain.Lateral = false
		jj := *j
		jj.Right = &plain
		j = &jj
	}
	right, rs, err := sb.bindFromItem(j.Right)
	if err != nil {
		return nil, nil, err
	}
	kind := plan.InnerJoin
	switch j.Tp {
	case ast.LeftJoin:
		kind = plan.LeftJoin
	case ast.RightJoin:
		kind = plan.RightJoin
	}
	var on ast.ExprNode
	if j.On != nil {
		on = j.On.Expr
		if rest, full := stripFullJoinMarker(on); full {
			kind, on = plan.FullJoin, rest
		}
	}
	if j.NaturalJoin || len(j.Using) > 0 {
		names, alias, err := usingNames(j.Using)
		if err != nil {
			return nil, nil, err
		}
		return sb.bindUsingAs(kind, left, ls, right, rs, names, alias, j.NaturalJoin)
	}
	if call, ok := on.(*ast.FuncCallExpr); ok && kind == plan.FullJoin &&
		(call.FnName.L == front.UsingJoinFunc || call.FnName.L == front.NaturalJoinFunc) {
		// FULL JOIN ... USING and NATURAL FULL JOIN (front).
		var cols []*ast.ColumnName
		for _, a := range call.Args {
			c, ok := a.(*ast.ColumnNameExpr)
			if !ok {
				return nil, nil, sqlerr.New(sqlerr.SyntaxError, "syntax error in USING: write column names")
			}
			cols = append(cols, c.Name)
		}
		names, alias, err := usingNames(cols)
		if err != nil {
			return nil, nil, err
		}
		return sb.bindUsingAs(kind, left, ls, right, rs, names, alias, call.FnName.L == front.NaturalJoinFunc)
	}
	return sb.bindJoin(kind, left, ls, right, rs, on)
}

func (sb *selectBinder) bindFromItem(n ast.ResultSetNode) (plan.Node, *scope, error) {
	switch n := n.(type) {
	case *ast.Join:
		return sb.bindFrom(n)
	case *ast.TableSource:
		return sb.bindTableSource(n)
	}
	return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "this FROM clause is not supported yet")
}

func (sb *selectBinder) bindTableSource(ts *ast.TableSource) (plan.Node, *scope, error) {
	var node plan.Node
	var err error
	alias := ts.AsName.O
	switch src := ts.Source.(type) {
	case *ast.TableName:
		if src.TableSample != nil {
			// Reading every row instead would answer a different query.
			return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "TABLESAMPLE is not supported").
				WithHint("Filter the rows yourself, e.g. WHERE id %% 10 = 0.")
		}
		if w, ok := sb.window(src.Name.O); ok {
			return sb.bindWindow(w, alias)
		}
		if w, ok := sb.work[src.Name.O]; ok && src.Schema.O == "" {
			if alias == "" {
				alias = w.Name
			}
			return w, scopeOf(alias, w.Cols), nil
		}
		if src.Schema.O == "" {
			if node, sc, ok, err := sb.bindCTE(src.Name.O, alias); ok {
				return node, sc, err
			}
		}
		return sb.bindTableName(src.Name.O, src.Schema.O, alias)
	case *ast.SelectStmt:
		node, err = sb.bindSelect(src)
	case *ast.SetOprStmt:
		node, err = sb.bindSetOpr(src)
	default:
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "this FROM item is not supported yet")
	}
	if err != nil {
		return nil, nil, err
	}
	cols, err := renameColumns(node.Schema(), ts.ColumnNames, alias)
	if err != nil {
		return nil, nil, err
	}
	return node, scopeOf(alias, cols), nil
}

func (sb *selectBinder) bindTableName(name, schema, alias string) (plan.Node, *scope, error) {
	if s := schema; s != "" && s != "public" {
		// Only system tables (pg_catalog.pg_class, information_schema.columns)
		// live outside public; they go by their qualified names.
		if alias == "" {
			alias = name
		}
		name = s + "." + name
	}
	desc, ok := sb.cat.Lookup(name)
	var rows func() []types.Row
	if !ok {
		desc, rows, ok = sb.cat.SystemTable(name)
	} else if desc.Kind == catalog.KindSequence {
		if t, seqRows, isTable := sb.cat.SequenceTable(desc); isTable {
			desc, rows = t, seqRows
		}
	}
	if !ok {
		err := sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
		if sb.params != nil {
			err.Position = sb.params.stmt.IdentPosition(name)
		}
		return nil, nil, err
	}
	if desc.Kind == catalog.KindPlainView {
		return sb.expandPlainView(desc, alias)
	}
	switch desc.Kind {
	case catalog.KindUnpopulatedView:
		return nil, nil, NotPopulated(desc.Name)
	case catalog.KindSecret:
		return nil, nil, sqlerr.New(sqlerr.WrongObjectType, "%q is a secret, not a relation", name).
			WithHint("A secret's value is used by the statements that name it (CREATE SOURCE ... PASSWORD SECRET %s) and never shown.", name)
	case catalog.KindSource:
		return nil, nil, sqlerr.New(sqlerr.WrongObjectType, "%q is a source, not a relation", name).
			WithHint("Read its mirrored tables; SHOW SOURCES lists them.")
	}
	cols, err := desc.Schema()
	if err != nil {
		return nil, nil, err
	}
	if alias == "" {
		alias = name
	}
	sc := scopeOf(alias, cols)
	if oid := sb.cat.RelationOID(desc); oid != 0 {
		for i := range sc.cols {
			sc.cols[i].relOID = oid
		}
	}
	if desc.Kind == catalog.KindTable && rows == nil {
		for i := range sc.cols {
			sc.cols[i].pk = slices.Contains(desc.PrimaryKey, sc.cols[i].name)
		}
	}
	wm, err := BindWatermark(desc, cols)
	if err != nil {
		return nil, nil, err
	}
	var keys []string
	if rows == nil {
		keys = desc.MemberKeys()
	}
	var gen []plan.GeneratedColumn
	if desc.Kind == catalog.KindStream {
		if gen, err = BindGenerated(desc, cols); err != nil {
			return nil, nil, err
		}
	}
	return &plan.Scan{Object: desc, Cols: cols, Keys: keys, Rows: rows, Watermark: wm, Generated: gen}, sc, nil
}

// ColumnName is PostgreSQL's default name of an output column
// (FigureColname).
func ColumnName(n ast.ExprNode) string {
	name, _ := figureName(n)
	if name == "" {
		return "?column?"
	}
	return name
}

// figureName returns a name and its strength: 2 for column and function
// names, 1 for a type name from a cast, 0 for nothing useful. A cast takes
// its type's name unless its operand has a strong name.
func figureName(n ast.ExprNode) (string, int) {
	switch n := n.(type) {
	case *ast.ColumnNameExpr:
		return n.Name.Name.O, 2
	case *ast.ParenthesesExpr:
		return figureName(n.Expr)
	case *ast.AggregateFuncExpr:
		return strings.ToLower(n.F), 2
	case *ast.WindowFuncExpr:
		return strings.ToLower(n.Name), 2
	case *ast.FuncCallExpr:
		switch n.FnName.L {
		case front.CastFunc:
			if len(n.Args) == 2 {
				if name, strength := figureName(n.Args[0]); strength > 1 {
					return name, strength
				}
				if v, ok := n.Args[1].(*test_driver.ValueExpr); ok {
					return pgTypeColumnName(v.GetString()), 1
				}
			}
			return "", 0
		case front.IntervalFunc:
			return "interval", 1
		case "concat": // a || b
			return "", 0
		case front.ConcatFunc:
			return "concat", 2
		case front.ExtractFunc:
			return "extract", 2
		case front.ArrayFunc:
			return "array", 2
		case front.CardinalityFunc:
			return "cardinality", 2
		case front.ContainsFunc, front.ContainedFunc, front.OverlapFunc:
			return "", 0
		}
		if expr.IsJSONOperatorFunc(n.FnName.L) {
			return "", 0
		}
		return n.FnName.L, 2
	case *ast.CaseExpr:
		return "case", 1
	case *ast.ExistsSubqueryExpr:
		if n.Not {
			return "", 0
		}
		return "exists", 2
	case *ast.SubqueryExpr:
		// A scalar subquery is named as its (only) output column.
		if name := subqueryColumnName(n.Query); name != "" && !n.Exists {
			return name, 2
		}
	}
	return "", 0
}

// subqueryColumnName is the name of the first output column of q, a
// SELECT or a set operation (its first SELECT's), or "" when it is not
// known before binding (SELECT *).
func subqueryColumnName(q ast.Node) string {
	switch q := q.(type) {
	case *ast.SelectStmt:
		if q.Fields == nil {
			return ""
		}
		for _, f := range q.Fields.Fields {
			if call, ok := f.Expr.(*ast.FuncCallExpr); ok && (call.FnName.L == front.DistinctOnFunc || call.FnName.L == front.NoColumnsFunc) {
				continue
			}
			if f.WildCard != nil {
				return ""
			}
			if f.AsName.O != "" {
				return f.AsName.O
			}
			return ColumnName(f.Expr)
		}
	case *ast.SetOprStmt:
		if q.SelectList != nil && len(q.SelectList.Selects) > 0 {
			return subqueryColumnName(q.SelectList.Selects[0])
		}
	case *ast.SetOprSelectList:
		if len(q.Selects) > 0 {
			return subqueryColumnName(q.Selects[0])
		}
	}
	return ""
}

// pgTypeColumnName is the column name PostgreSQL gives a cast to t: the
// type's internal name ('x'::text is "text", 2.5::int is "int4").
func pgTypeColumnName(t string) string {
	typ, err := types.Parse(t)
	if err != nil {
		return t
	}
	if typ.IsArray() {
		typ = typ.Elem() // int[] names its column after the element: int4
	}
	return pgcatalog.Typname(typ)
}

// sameExpr reports whether a and b are the same expression: the same text
// over the same columns (a column's text is its name only).
func sameExpr(a, b expr.Expr) bool {
	if a.String() != b.String() {
		return false
	}
	cols := func(e expr.Expr) []int {
		var idx []int
		expr.Visit(e, func(x expr.Expr) {
			if c, ok := x.(*expr.ColRef); ok {
				idx = append(idx, c.Idx)
			}
		})
		return idx
	}
	return slices.Equal(cols(a), cols(b))
}

// positionSchema marks a column reference that * made by position (its
// name is the index in the FROM clause's scope), for a name that two
// columns share.
const positionSchema = "streamdb_position"

// ambiguousIn reports whether another visible column of in has c's table
// and name.
func ambiguousIn(in *scope, c scopeColumn) bool {
	n := 0
	for _, o := range in.cols {
		if o.name == c.name && o.table == c.table && !o.hidden {
			n++
		}
	}
	return n > 1
}

// stripParens is n without the parentheses around it: PostgreSQL's
// grammar drops them, so ORDER BY (2) is a position and GROUP BY (name)
// may name an output column.
func stripParens(n ast.ExprNode) ast.ExprNode {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			return n
		}
		n = p.Expr
	}
}
