package exec

import "streamdb/expr"

func colRefIndex(e expr.Expr) (int, bool) {
	if c, ok := e.(*expr.ColRef); ok {
		return c.Idx, true
	}
	return 0, false
}
