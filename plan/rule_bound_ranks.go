package plan

import (
	"streamdb/expr"
	"streamdb/types"
)

// boundRanksRule lowers the Count of ranking TopNs that a WHERE bounds.
var boundRanksRule = WhereRule{Name: "bound_ranks", Apply: func(f *Filter) Node {
	boundRanks(f)
	return f
}}

// boundRanks lowers the Count of the ranking TopNs under a filter whose
// condition bounds their rank from above: rn <= N, rn < N, rn = N, N >= rn
// and N > rn (as conjuncts of an AND). The filter itself stays in place
// above the TopN, so the result is unchanged: the TopN only stops
// producing rows the filter would drop. This is what lets a materialized
// view keep just the top N rows of each partition.
func boundRanks(f *Filter) {
	for _, c := range Conjuncts(f.Cond) {
		col, bound, ok := rankBound(c)
		if !ok {
			continue
		}
		if t := rankSource(f.Input, col); t != nil && (t.Count < 0 || bound < t.Count) {
			t.Count = bound
		}
	}
}

// rankBound reads col <op> constant (or constant <op> col) as an upper
// bound on the column: every row passing it has col <= bound.
func rankBound(e expr.Expr) (col int, bound int64, ok bool) {
	f, isFunc := e.(*expr.Func)
	if !isFunc || !f.Infix || len(f.Args) != 2 {
		return 0, 0, false
	}
	op := f.Name
	ref, refOK := f.Args[0].(*expr.ColRef)
	other := f.Args[1]
	if !refOK {
		// Mirror N >= rn into rn <= N.
		if ref, refOK = f.Args[1].(*expr.ColRef); !refOK {
			return 0, 0, false
		}
		other = f.Args[0]
		op = map[string]string{">=": "<=", ">": "<", "=": "=", "<=": ">=", "<": ">"}[op]
	}
	n, ok := constInt(other)
	if !ok {
		return 0, 0, false
	}
	switch op {
	case "<=", "=":
		bound = n
	case "<":
		bound = n - 1
	default:
		return 0, 0, false
	}
	if bound < 0 {
		bound = 0
	}
	return ref.Idx, bound, true
}

// constInt evaluates an expression without column references or
// parameters to an integer.
func constInt(e expr.Expr) (int64, bool) {
	if !expr.IsConstant(e) {
		return 0, false
	}
	d, err := e.Eval(nil)
	if err != nil || d.IsNull() {
		return 0, false
	}
	if d.K != types.KindInt {
		return 0, false
	}
	return d.I, true
}

// rankSource follows output column col of n down through projections of
// plain column references and filters to the ranking TopN that computes
// it, or returns nil.
func rankSource(n Node, col int) *TopN {
	for {
		switch x := n.(type) {
		case *Filter:
			n = x.Input
		case *Project:
			ref, ok := x.Exprs[col].(*expr.ColRef)
			if !ok {
				return nil
			}
			n, col = x.Input, ref.Idx
		case *TopN:
			if x.HasRank() && col == x.RankCol() && x.Offset == 0 {
				return x
			}
			return nil
		default:
			return nil
		}
	}
}
