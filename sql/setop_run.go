package sql

import (
	"streamdb/binder"
	"streamdb/exec"
	"streamdb/plan"
	"streamdb/types"
)

// materializeSetOps returns a copy of n in which each INTERSECT and EXCEPT
// is replaced by its rows (a Values node): run executes a plan.
func materializeSetOps(n plan.Node, run func(plan.Node) ([]types.Row, error)) (plan.Node, error) {
	return binder.MapPlanNodes(n, nil, func(x plan.Node) (plan.Node, bool, error) {
		s, ok := x.(*binder.SetOp)
		if !ok {
			return x, false, nil
		}
		rows, err := runSetOp(s, run)
		if err != nil {
			return nil, true, err
		}
		return valuesOf(rows, s.Cols), true, nil
	})
}

// runSetOp counts the right side's rows by value, then keeps each left
// row as SQL defines the operation: a row m times on the left and n
// times on the right appears min(m, n) times in INTERSECT ALL, max(m-n,
// 0) times in EXCEPT ALL, and once in INTERSECT (n > 0) and EXCEPT (n ==
// 0). The left side's order of first appearance is kept.
func runSetOp(s *binder.SetOp, run func(plan.Node) ([]types.Row, error)) ([]types.Row, error) {
	left, err := run(s.Left)
	if err != nil {
		return nil, err
	}
	right, err := run(s.Right)
	if err != nil {
		return nil, err
	}
	key := func(row types.Row) string {
		var k []byte
		for _, d := range row {
			k = exec.AppendCmpKey(k, d)
		}
		return string(k)
	}
	inRight := make(map[string]int, len(right))
	for _, row := range right {
		inRight[key(row)]++
	}
	emitted := map[string]bool{}
	var out []types.Row
	for _, row := range left {
		k := key(row)
		n := inRight[k]
		switch {
		case s.All && !s.Except:
			if n > 0 {
				inRight[k] = n - 1
				out = append(out, row)
			}
		case s.All && s.Except:
			if n > 0 {
				inRight[k] = n - 1
			} else {
				out = append(out, row)
			}
		default:
			if (n > 0) != s.Except && !emitted[k] {
				emitted[k] = true
				out = append(out, row)
			}
		}
	}
	return out, nil
}
