package binder

import (
	"strings"

	"streamdb/expr"
	"streamdb/front"
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

// bpcharOperands fits the operands of a comparison with a character(n)
// value to PostgreSQL's bpchar comparison, which ignores trailing spaces:
// the other operand, when it is an untyped literal or of character
// varying, is compared as bpchar too, without its trailing spaces (the
// character(n) side is kept without them). Text is compared as text:
// PostgreSQL resolves character(n) = text to text's operator.
func (b *binder) bpcharOperands(op string, l, r expr.Expr, s *scope) (expr.Expr, expr.Expr, error) {
	switch op {
	case "=", "<>", "<", "<=", ">", ">=", "<=>":
	default:
		return l, r, nil
	}
	var err error
	if b.fixedMod(r, s).Fixed {
		if l, err = b.asBpchar(l, s); err != nil {
			return nil, nil, err
		}
	}
	if b.fixedMod(l, s).Fixed {
		if r, err = b.asBpchar(r, s); err != nil {
			return nil, nil, err
		}
	}
	return l, r, nil
}

// asBpchar is e compared with a character(n) value: an untyped or
// character varying literal without its trailing spaces, another
// character varying expression through rtrim, anything else as it is.
func (b *binder) asBpchar(e expr.Expr, s *scope) (expr.Expr, error) {
	if e.Type() != types.Unknown && e.Type() != types.Varchar || b.fixedMod(e, s).Fixed {
		return e, nil
	}
	if c, ok := e.(*expr.Const); ok {
		if c.D.K != types.KindString {
			return e, nil
		}
		return &expr.Const{D: types.NewString(strings.TrimRight(c.D.S, " ")), T: c.T, Mod: c.Mod}, nil
	}
	if e.Type() != types.Varchar {
		return e, nil
	}
	return expr.Call("rtrim", []expr.Expr{e})
}

// padFixed is e padded with spaces to its length when e is of
// character(n): the form PostgreSQL's bpchar keeps, which its LIKE,
// octet_length and everything reading its text output (concat, format, a
// cast to bytea) see. streamdb keeps character(n) values without their
// padding; other expressions are returned as they are.
func (b *binder) padFixed(e expr.Expr, s *scope) (expr.Expr, error) {
	m := b.fixedMod(e, s)
	if !m.Fixed {
		return e, nil
	}
	return expr.Call("rpad", []expr.Expr{e, &expr.Const{D: types.NewInt(int64(m.Length)), T: types.Int4}})
}

// paddedArgs are the functions whose character(n) arguments PostgreSQL
// passes with their padding, by the index of the first such argument:
// octet_length has a bpchar form that counts it, and concat, concat_ws and
// format read the text output of their VARIADIC "any" arguments (the
// separator of concat_ws and the format string of format are text, cast
// from bpchar without the padding).
var paddedArgs = map[string]int{"octet_length": 0, front.ConcatFunc: 0, "concat_ws": 1, "format": 1}

// padFixedArgs pads the character(n) arguments of a call of fn that sees
// their padding (paddedArgs).
func (b *binder) padFixedArgs(fn string, args []expr.Expr, s *scope) error {
	first, ok := paddedArgs[fn]
	if !ok || first >= len(args) {
		return nil
	}
	for i, a := range args[first:] {
		p, err := b.padFixed(a, s)
		if err != nil {
			return err
		}
		args[first+i] = p
	}
	return nil
}
