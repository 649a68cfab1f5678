package expr

import (
	"strings"
	"unicode/utf8"

	"streamdb/sqlerr"
	"streamdb/types"
)

// maxTextBytes is the longest text PostgreSQL builds (MaxAllocSize less
// its 4-byte header).
const maxTextBytes = 1<<30 - 1 - 4

// stringFunc builds the string functions whose PostgreSQL behaviour needs
// more than a Go one-liner; ok is false for other names.
func stringFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	mk := func(t types.Type, a []Expr, fn func(v []types.Datum) (types.Datum, error)) (Expr, bool, error) {
		return &Func{Name: name, Args: a, T: t, Fn: strict(fn)}, true, nil
	}
	textArgs := func(want ...types.Type) ([]Expr, error) {
		if len(args) != len(want) {
			return nil, wrongArgs(name, args)
		}
		for i, a := range args {
			if t := a.Type(); t != types.Unknown && !t.IsString() && !(want[i].IsInteger() && (t == types.Int2 || t == types.Int4)) {
				return nil, wrongArgs(name, args)
			}
		}
		return castArgs(args, want...)
	}
	switch name {
	case "upper", "lower":
		// Unicode case mapping, as PostgreSQL does with a UTF-8 LC_CTYPE
		// (C.utf8, en_US.UTF-8: what deployments use; under LC_CTYPE C it
		// would change ASCII letters only).
		a, err := textArgs(types.Text)
		if err != nil {
			return nil, true, err
		}
		upper := name == "upper"
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			if upper {
				return types.NewString(strings.ToUpper(v[0].S)), nil
			}
			return types.NewString(strings.ToLower(v[0].S)), nil
		})
	case "btrim", "ltrim", "rtrim":
		if len(args) != 2 {
			return nil, false, nil
		}
		a, err := textArgs(types.Text, types.Text)
		if err != nil {
			return nil, true, err
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			s, set := v[0].S, v[1].S
			if name != "rtrim" {
				s = strings.TrimLeft(s, set)
			}
			if name != "ltrim" {
				s = strings.TrimRight(s, set)
			}
			return types.NewString(s), nil
		})
	case "like_escape":
		a, err := textArgs(types.Text, types.Text)
		if err != nil {
			return nil, true, err
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			s, err := LikeEscape(v[0].S, v[1].S)
			if err != nil {
				return types.Null, err
			}
			return types.NewString(s), nil
		})
	case "chr":
		if len(args) != 1 || !(args[0].Type() == types.Int4 || args[0].Type() == types.Int2 || args[0].Type() == types.Unknown) {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Int4)
		if err != nil {
			return nil, true, err
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			return chr(v[0].I)
		})
	case "repeat":
		a, err := textArgs(types.Text, types.Int4)
		if err != nil {
			return nil, true, err
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			n := max(v[1].I, 0)
			if n > 0 && int64(len(v[0].S)) > maxTextBytes/n {
				return types.Null, sqlerr.New(sqlerr.ProgramLimitExceeded, "requested length too large")
			}
			return types.NewString(strings.Repeat(v[0].S, int(n))), nil
		})
	}
	return nil, false, nil
}

// chr is PostgreSQL's chr() in a UTF8 database: the character of code
// point n, which must be a valid one other than NUL.
func chr(n int64) (types.Datum, error) {
	switch {
	case n < 0:
		return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "character number must be positive")
	case n == 0:
		return types.Null, sqlerr.New(sqlerr.ProgramLimitExceeded, "null character not permitted")
	case n > utf8.MaxRune:
		return types.Null, sqlerr.New(sqlerr.ProgramLimitExceeded, "requested character too large for encoding: %d", n)
	case n >= 0xD800 && n <= 0xDFFF:
		return types.Null, sqlerr.New(sqlerr.ProgramLimitExceeded, "requested character not valid for encoding: %d", n)
	}
	return types.NewString(string(rune(n))), nil
}
