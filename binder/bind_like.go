package binder

import (
	"streamdb/expr"
	"streamdb/types"
)

// withLikeEscape is the pattern of LIKE ... ESCAPE esc, rewritten with
// backslash as its escape as PostgreSQL's like_escape(pattern, esc)
// does; esc 0 is an empty ESCAPE string, no escape character. A
// constant pattern is rewritten here, so that LIKE compiles it once.
func withLikeEscape(pattern expr.Expr, esc byte) (expr.Expr, error) {
	escape := ""
	if esc != 0 {
		escape = string([]byte{esc})
	}
	if c, ok := pattern.(*expr.Const); ok && !c.D.IsNull() && (c.T.IsString() || c.T == types.Unknown) {
		s, err := expr.LikeEscape(c.D.S, escape)
		if err != nil {
			return nil, err
		}
		return &expr.Const{D: types.NewString(s), T: c.T}, nil
	}
	return expr.Call("like_escape", []expr.Expr{pattern, &expr.Const{D: types.NewString(escape), T: types.Text}})
}
