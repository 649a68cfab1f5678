package expr

import (
	"streamdb/sqlerr"
	"streamdb/types"
)

// PostgreSQL's bitwise operators on smallint, integer and bigint:
// & | # (xor) over two integers of their common type, << and >> of an
// integer by an integer count, with the left operand's type, and prefix ~.
// None of them is an overflow error: a shift keeps the bits that fit, as
// PostgreSQL's C shifts do on x86-64 (the count taken modulo 32 for
// smallint and integer, modulo 64 for bigint; smallint shifts in 32 bits
// and keeps the low 16).

// isBitOp reports whether op is one of the binary bitwise operators.
func isBitOp(op string) bool {
	switch op {
	case "&", "|", "#", "<<", ">>":
		return true
	}
	return false
}

// bitOp builds l op r for a binary bitwise operator; l and r have been
// unified (an unknown side took the other side's type).
func bitOp(op string, l, r Expr) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	if op == "<<" || op == ">>" {
		// The count is an integer: smallint widens to it, bigint does not.
		if !lt.IsInteger() || !(rt == types.Int4 || rt == types.Int2) {
			return nil, opTypeError(op, lt, rt)
		}
		var err error
		if r, err = Cast(r, types.Int4); err != nil {
			return nil, err
		}
		return bitFunc(op, l, r, lt, shiftKernel(op, lt)), nil
	}
	if !lt.IsInteger() || !rt.IsInteger() {
		return nil, opTypeError(op, lt, rt)
	}
	t := promote(lt, rt)
	var err error
	if l, err = Cast(l, t); err != nil {
		return nil, err
	}
	if r, err = Cast(r, t); err != nil {
		return nil, err
	}
	var fn func(a, b int64) int64
	switch op {
	case "&":
		fn = func(a, b int64) int64 { return a & b }
	case "|":
		fn = func(a, b int64) int64 { return a | b }
	default: // #
		fn = func(a, b int64) int64 { return a ^ b }
	}
	return bitFunc(op, l, r, t, fn), nil
}

// shiftKernel returns a << b or a >> b over values of type t.
func shiftKernel(op string, t types.Type) func(a, b int64) int64 {
	left := op == "<<"
	switch t {
	case types.Int8:
		if left {
			return func(a, b int64) int64 { return a << (uint64(b) & 63) }
		}
		return func(a, b int64) int64 { return a >> (uint64(b) & 63) }
	case types.Int4:
		if left {
			return func(a, b int64) int64 { return int64(int32(a) << (uint64(b) & 31)) }
		}
		return func(a, b int64) int64 { return int64(int32(a) >> (uint64(b) & 31)) }
	}
	// smallint: shifted as a 32-bit integer, its low 16 bits kept.
	if left {
		return func(a, b int64) int64 { return int64(int16(int32(a) << (uint64(b) & 31))) }
	}
	return func(a, b int64) int64 { return int64(int16(int32(a) >> (uint64(b) & 31))) }
}

func bitFunc(op string, l, r Expr, t types.Type, fn func(a, b int64) int64) Expr {
	return binary(&Func{Name: op, Infix: true, Args: []Expr{l, r}, T: t},
		func(a, b types.Datum) (types.Datum, error) {
			if a.IsNull() || b.IsNull() {
				return types.Null, nil
			}
			return types.NewInt(fn(a.I, b.I)), nil
		})
}

// BitNot builds prefix ~ (bitwise not) of an integer.
func BitNot(e Expr) (Expr, error) {
	t := e.Type()
	if t == types.Unknown {
		return nil, sqlerr.New(sqlerr.AmbiguousFunction, "operator is not unique: ~ unknown").
			WithHint("Could not choose a best candidate operator. You might need to add explicit type casts.")
	}
	if !t.IsInteger() {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: ~ %s", t).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	return unary(&Func{Name: "~", Infix: true, Args: []Expr{e}, T: t}, func(a types.Datum) (types.Datum, error) {
		if a.IsNull() {
			return types.Null, nil
		}
		return types.NewInt(^a.I), nil
	}), nil
}
