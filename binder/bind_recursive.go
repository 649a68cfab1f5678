package binder

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// WITH RECURSIVE in ad-hoc queries. A recursive CTE is a UNION [ALL] of
// a non-recursive term (the first query) and recursive terms that read
// the CTE itself; that reference reads the working table, the rows the
// previous iteration added. sql/recursive_run.go iterates until an iteration
// adds no rows, as PostgreSQL does, up to a bound on rows and iterations.

// RecursiveCTE is the plan of a recursive CTE: Anchor's rows, then Step's
// over and over with Work standing for the previous iteration's rows.
// UNION (not ALL) keeps only rows not seen before.
type RecursiveCTE struct {
	Name   string
	Anchor plan.Node
	Step   plan.Node
	Work   *workTable
	All    bool
	Cols   []types.Column
}

func (r *RecursiveCTE) Schema() []types.Column { return r.Cols }
func (r *RecursiveCTE) Children() []plan.Node  { return []plan.Node{r.Anchor, r.Step} }
func (r *RecursiveCTE) Describe() string {
	kind := "UNION"
	if r.All {
		kind = "UNION ALL"
	}
	return fmt.Sprintf("Recursive %s %s (iterated until no new rows)", kind, r.Name)
}

// workTable is the recursive term's reference to its own CTE.
type workTable struct {
	Name string
	Cols []types.Column
}

func (w *workTable) Schema() []types.Column { return w.Cols }
func (w *workTable) Children() []plan.Node  { return nil }
func (w *workTable) Describe() string       { return "Working table " + w.Name }

// bindRecursiveCTE binds cte, of a WITH RECURSIVE, if it refers to
// itself; ok is false for one that does not (bound as a plain CTE).
func (sb *selectBinder) bindRecursiveCTE(cte *ast.CommonTableExpression) (plan.Node, bool, error) {
	name := cte.Name.O
	set, isSet := cte.Query.Query.(*ast.SetOprStmt)
	if !refersToTable(cte.Query.Query, name) {
		return nil, false, nil
	}
	if !isSet || set.SelectList == nil || len(set.SelectList.Selects) < 2 {
		return nil, true, sqlerr.New(sqlerr.InvalidRecursion, "recursive query %q does not have the form non-recursive-term UNION [ALL] recursive-term", name)
	}
	if set.OrderBy != nil || set.Limit != nil {
		return nil, true, sqlerr.New(sqlerr.FeatureNotSupported, "ORDER BY or LIMIT in a recursive query is not implemented")
	}
	// As in PostgreSQL, A UNION B UNION C is (A UNION B) UNION C: the
	// recursive term is the last query, the rest is the non-recursive
	// term.
	selects := set.SelectList.Selects
	last, ok := selects[len(selects)-1].(*ast.SelectStmt)
	if !ok || last.AfterSetOperator == nil || (*last.AfterSetOperator != ast.Union && *last.AfterSetOperator != ast.UnionAll) {
		return nil, true, sqlerr.New(sqlerr.FeatureNotSupported, "a recursive query must join its terms with UNION or UNION ALL")
	}
	first := &ast.SetOprSelectList{Selects: selects[:len(selects)-1]}
	if refersToTable(first, name) {
		return nil, true, sqlerr.New(sqlerr.InvalidRecursion, "recursive reference to query %q must not appear within its non-recursive term", name)
	}
	var anchor plan.Node
	var err error
	if len(first.Selects) == 1 {
		s, ok := first.Selects[0].(*ast.SelectStmt)
		if !ok {
			return nil, true, sqlerr.New(sqlerr.FeatureNotSupported, "this non-recursive term is not supported")
		}
		anchor, err = sb.bindSelect(s)
	} else {
		anchor, err = sb.bindSetOprList(first)
	}
	if err != nil {
		return nil, true, err
	}
	cols := append([]types.Column(nil), anchor.Schema()...)
	if len(cte.ColNameList) > len(cols) {
		return nil, true, sqlerr.New(sqlerr.InvalidColumnReference, "WITH query %q has %d columns available but %d columns specified", name, len(cols), len(cte.ColNameList))
	}
	for i, c := range cte.ColNameList {
		cols[i].Name = c.O
	}
	work := &workTable{Name: name, Cols: cols}
	saved := sb.work
	sb.work = map[string]*workTable{}
	for k, v := range saved {
		sb.work[k] = v
	}
	sb.work[name] = work
	defer func() { sb.work = saved }()
	all := *last.AfterSetOperator == ast.UnionAll
	step, err := sb.bindSelect(last)
	if err != nil {
		return nil, true, err
	}
	got := step.Schema()
	if len(got) != len(cols) {
		return nil, true, sqlerr.New(sqlerr.SyntaxError, "each UNION query must have the same number of columns")
	}
	for i := range got {
		if got[i].Type != cols[i].Type {
			return nil, true, sqlerr.New(sqlerr.DatatypeMismatch, "recursive query %q column %d has type %s in non-recursive term but type %s overall", name, i+1, cols[i].Type, got[i].Type).
				WithHint("Cast the output of the non-recursive term to the correct type.")
		}
	}
	return &RecursiveCTE{Name: name, Anchor: anchor, Step: step, Work: work, All: all, Cols: cols}, true, nil
}

// refersToTable reports whether q names table name in a FROM clause.
func refersToTable(q ast.Node, name string) bool {
	v := &tableNames{name: name}
	q.Accept(v)
	return v.found
}

type tableNames struct {
	name  string
	found bool
}

func (v *tableNames) Enter(n ast.Node) (ast.Node, bool) {
	if t, ok := n.(*ast.TableName); ok && t.Schema.O == "" && t.Name.O == v.name {
		v.found = true
	}
	return n, v.found
}
func (v *tableNames) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// sqlerr.InvalidRecursion is PostgreSQL's SQLSTATE for a malformed recursive
// query.
