package sql

import (
	"streamdb/binder"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Bounds of a recursive CTE's evaluation. PostgreSQL runs a recursion
// that never ends until the client cancels it; streamdb stops it with
// 54000 so that a mistaken query does not hold a snapshot and memory
// forever.
const (
	maxRecursiveRows       = 1_000_000
	maxRecursiveIterations = 100_000
)

// materializeRecursive returns a copy of n in which each recursive CTE is
// replaced by its rows (a Values node): run executes a plan (the anchor,
// or the recursive term over the working table's rows).
func materializeRecursive(n plan.Node, run func(plan.Node) ([]types.Row, error)) (plan.Node, error) {
	return binder.MapPlanNodes(n, nil, func(x plan.Node) (plan.Node, bool, error) {
		r, ok := x.(*binder.RecursiveCTE)
		if !ok {
			return x, false, nil
		}
		rows, err := iterateRecursive(r, run)
		if err != nil {
			return nil, true, err
		}
		return valuesOf(rows, r.Cols), true, nil
	})
}

// iterateRecursive evaluates r as PostgreSQL does: the anchor's rows are
// the first working table; each iteration runs the recursive term over
// the working table, and its rows (for UNION: those not seen before) are
// added to the result and become the next working table; an empty
// iteration ends it.
func iterateRecursive(r *binder.RecursiveCTE, run func(plan.Node) ([]types.Row, error)) ([]types.Row, error) {
	seen := map[string]bool{}
	keep := func(rows []types.Row) []types.Row {
		if r.All {
			return rows
		}
		out := rows[:0:0]
		for _, row := range rows {
			var k []byte
			for _, d := range row {
				k = exec.AppendCmpKey(k, d)
			}
			if !seen[string(k)] {
				seen[string(k)] = true
				out = append(out, row)
			}
		}
		return out
	}
	anchor, err := run(r.Anchor)
	if err != nil {
		return nil, err
	}
	result := keep(anchor)
	work := result
	for i := 0; len(work) > 0; i++ {
		if i >= maxRecursiveIterations || len(result) > maxRecursiveRows {
			return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "recursive query %q stopped after %d iterations and %d rows", r.Name, i, len(result)).
				WithHint("Check that the recursive term stops producing rows (a WHERE on the working table), or bound it with a counter column.")
		}
		step, err := binder.MapPlanNodes(r.Step, nil, func(x plan.Node) (plan.Node, bool, error) {
			if x == plan.Node(r.Work) {
				return valuesOf(work, r.Cols), true, nil
			}
			return x, false, nil
		})
		if err != nil {
			return nil, err
		}
		rows, err := run(step)
		if err != nil {
			return nil, err
		}
		work = keep(rows)
		result = append(result, work...)
	}
	return result, nil
}

// valuesOf is a Values node of constant rows.
func valuesOf(rows []types.Row, cols []types.Column) *plan.Values {
	out := make([][]expr.Expr, len(rows))
	for i, row := range rows {
		out[i] = make([]expr.Expr, len(row))
		for j, d := range row {
			out[i][j] = &expr.Const{D: d, T: cols[j].Type}
		}
	}
	return &plan.Values{Rows: out, Cols: cols}
}
