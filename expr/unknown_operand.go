package expr

import (
	"streamdb/sqlerr"
	"streamdb/types"
)

// unifyDateTimeArith types an unknown operand (a string literal or an
// untyped parameter) of date and interval arithmetic as PostgreSQL's
// operator resolution does, where taking the other side's type would pick
// an operator that does not exist: timestamp[tz] + '1 day' adds an
// interval, interval * '2' and interval / '2' scale by a double, and
// date + '...' matches several operators (date + integer, + interval,
// + time), which PostgreSQL refuses as ambiguous. The other forms (ts -
// '...', date - '...') are left to unify, which takes the other side's
// type as PostgreSQL does.
func unifyDateTimeArith(op string, l, r Expr) (Expr, Expr, error) {
	lt, rt := l.Type(), r.Type()
	if (lt == types.Unknown) == (rt == types.Unknown) {
		return l, r, nil
	}
	known := lt
	if known == types.Unknown {
		known = rt
	}
	to := types.Unknown
	switch {
	case op == "+" && known == types.Date:
		return nil, nil, sqlerr.New(sqlerr.AmbiguousFunction, "operator is not unique: %s + %s", lt, rt).
			WithHint("Could not choose a best candidate operator. You might need to add explicit type casts.")
	case op == "+" && known.IsTime():
		to = types.Interval
	case op == "*" && known == types.Interval, op == "/" && lt == types.Interval:
		to = types.Float8
	default:
		return l, r, nil
	}
	var err error
	if lt == types.Unknown {
		l, err = Cast(l, to)
	} else {
		r, err = Cast(r, to)
	}
	return l, r, err
}
