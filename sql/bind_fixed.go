package sql

import (
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
