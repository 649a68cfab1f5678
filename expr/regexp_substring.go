package expr

import (
	"streamdb/sqlerr"
	"streamdb/types"
)

// isStringOrUnknown reports whether t is a text type or an untyped literal,
// which PostgreSQL's function resolution reads as text.
func isStringOrUnknown(t types.Type) bool { return t == types.Unknown || t.IsString() }

// regexpSubstring is substring(s FROM pattern) (and substring(s, pattern)):
// the part of s that the first parenthesized subexpression of the POSIX
// pattern matched, or the whole match when it has none; NULL when the
// pattern does not match or that subexpression took no part.
// substring(s FROM pattern FOR escape), the SIMILAR TO form, is refused.
func regexpSubstring(args []Expr) (Expr, error) {
	if len(args) == 3 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "substring(... FROM ... FOR escape), the SIMILAR TO form, is not supported").
			WithHint("Use substring(string FROM pattern) with a POSIX regular expression.")
	}
	if !isStringOrUnknown(args[0].Type()) {
		return nil, wrongArgs("substring", args)
	}
	a, err := castArgs(args, types.Text, types.Text)
	if err != nil {
		return nil, err
	}
	var cache regexpCache
	return &Func{Name: "substring", Args: a, T: types.Text, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		re, err := cache.compile(v[1].S, "")
		if err != nil {
			return types.Null, err
		}
		m := re.FindStringSubmatchIndex(v[0].S)
		if len(m) > 2 {
			m = m[2:4] // the first group
		}
		if m == nil || m[0] < 0 {
			return types.Null, nil
		}
		return types.NewString(v[0].S[m[0]:m[1]]), nil
	})}, nil
}
