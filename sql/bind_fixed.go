package sql

import (
	"strings"

	"streamdb/expr"
	"streamdb/types"
)

// fixedMod is the character(n) modifier a select-list expression carries
// to its output column, which pads its values as PostgreSQL's bpchar does:
// a bare reference to a character(n) column, a cast to character(n), and
// above an aggregate a group key or min/max of such a column. Other
// expressions carry none.
func (b *binder) fixedMod(e expr.Expr, s *scope) types.Modifier {
	var m types.Modifier
	switch e := e.(type) {
	case *expr.ColRef:
		if b.agg == nil {
			if e.Idx < len(s.cols) && s.cols[e.Idx].name == e.Name {
				m = s.cols[e.Idx].mod
			}
			break
		}
		// Above an aggregate, e indexes its group keys, then its calls.
		var inner expr.Expr
		if k := e.Idx - len(b.agg.groupKeys); e.Idx < len(b.agg.groupKeys) {
			inner = b.agg.groupKeys[e.Idx]
		} else if k < len(b.agg.calls) && (b.agg.calls[k].Func == "min" || b.agg.calls[k].Func == "max") {
			inner = b.agg.calls[k].Arg
		}
		if c, ok := inner.(*expr.ColRef); ok && b.agg.input != nil && c.Idx < len(b.agg.input.cols) {
			m = b.agg.input.cols[c.Idx].mod
		} else if inner != nil {
			m = expr.Modifier(inner)
		}
	default:
		m = expr.Modifier(e)
	}
	if !m.Fixed {
		return types.Modifier{}
	}
	return m
}

// bpcharOperands drops the trailing spaces of a string literal compared
// with a character(n) column: PostgreSQL reads the literal as bpchar, whose
// trailing spaces do not count, and the column's values are stored
// without theirs.
func bpcharOperands(op string, l, r expr.Expr, s *scope) (expr.Expr, expr.Expr) {
	switch op {
	case "=", "<>", "<", "<=", ">", ">=":
	default:
		return l, r
	}
	return trimBpcharLiteral(l, r, s), trimBpcharLiteral(r, l, s)
}

// trimBpcharLiteral returns lit without trailing spaces when it is a
// string literal and other a character(n) column of scope s.
func trimBpcharLiteral(lit, other expr.Expr, s *scope) expr.Expr {
	c, ok := lit.(*expr.Const)
	if !ok || c.D.K != types.KindString || s == nil {
		return lit
	}
	ref, ok := other.(*expr.ColRef)
	if !ok || ref.Idx >= len(s.cols) || s.cols[ref.Idx].name != ref.Name || !s.cols[ref.Idx].mod.Fixed {
		return lit
	}
	return &expr.Const{D: types.NewString(strings.TrimRight(c.D.S, " ")), T: c.T}
}
