package exec

import (
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// tiesEnd is where FETCH ... WITH TIES stops in rows (sorted, past the
// offset, longer than n.Count): after the last row equal to the Count-th
// in every key of the Sort below n. NULLs tie with NULLs, as they sort
// together. Count 0 returns no rows, as in PostgreSQL.
func tiesEnd(n *plan.Limit, rows []types.Row) (int64, error) {
	s, ok := n.Input.(*plan.Sort)
	if !ok {
		return 0, sqlerr.New(sqlerr.SyntaxError, "WITH TIES cannot be specified without ORDER BY clause")
	}
	if n.Count == 0 {
		return 0, nil
	}
	keyOf := func(r types.Row) ([]types.Datum, error) {
		k := make([]types.Datum, len(s.Keys))
		for i, sk := range s.Keys {
			v, err := sk.Expr.Eval(r)
			if err != nil {
				return nil, err
			}
			k[i] = v
		}
		return k, nil
	}
	last, err := keyOf(rows[n.Count-1])
	if err != nil {
		return 0, err
	}
	end := n.Count
	for ; end < int64(len(rows)); end++ {
		k, err := keyOf(rows[end])
		if err != nil {
			return 0, err
		}
		for i := range k {
			if !sameForOrder(k[i], last[i]) {
				return end, nil
			}
		}
	}
	return end, nil
}

// sameForOrder reports whether a and b are peers in an ORDER BY.
func sameForOrder(a, b types.Datum) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() && b.IsNull()
	}
	return types.Compare(a, b) == 0
}
