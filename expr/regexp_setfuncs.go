package expr

import (
	"streamdb/types"
)

// RegexpRows binds the set-returning regexp functions of PostgreSQL 15:
// regexp_matches(string, pattern [, flags]) gives the text[] of each match
// (every match with flag g, else at most the first) and
// regexp_split_to_table(string, pattern [, flags]) each piece of the
// string between matches. Both are strict: a NULL argument gives no rows.
// The returned function gives the rows for the arguments' values; t is
// the column's type (a text[] value is its text form, as every array's
// is). ok is false for other names.
func RegexpRows(name string, args []Expr) (rows func([]types.Datum) ([]types.Datum, error), bound []Expr, t types.Type, ok bool, err error) {
	if name != "regexp_matches" && name != "regexp_split_to_table" {
		return nil, nil, types.Unknown, false, nil
	}
	if len(args) != 2 && len(args) != 3 {
		return nil, nil, types.Unknown, true, wrongArgs(name, args)
	}
	for _, a := range args {
		if t := a.Type(); t != types.Unknown && !t.IsString() {
			return nil, nil, types.Unknown, true, wrongArgs(name, args)
		}
	}
	if bound, err = castArgs(args, types.Text, types.Text, types.Text); err != nil {
		return nil, nil, types.Unknown, true, err
	}
	cache := &regexpCache{}
	global := name == "regexp_matches"
	rows = func(v []types.Datum) ([]types.Datum, error) {
		for _, d := range v {
			if d.IsNull() {
				return nil, nil
			}
		}
		flags := ""
		if len(v) == 3 {
			flags = v[2].S
		}
		re, g, err := cache.compileFor(name, v[1].S, flags, global)
		if err != nil {
			return nil, err
		}
		s := v[0].S
		var out []types.Datum
		if !global {
			for _, piece := range regexpSplit(re, s) {
				out = append(out, types.NewString(piece))
			}
			return out, nil
		}
		limit := 1
		if g {
			limit = -1
		}
		for _, m := range allMatches(re, s, limit) {
			out = append(out, types.NewString(matchArray(s, m)))
		}
		return out, nil
	}
	t = types.Text
	if global {
		t = types.ArrayOf(types.Text)
	}
	return rows, bound, t, true, nil
}

// SetReturning reports whether name is a set-returning function that the
// query binder knows (generate_series, unnest and the regexp ones), which
// are allowed only in FROM and at the top of select-list items.
func SetReturning(name string) bool {
	switch name {
	case "generate_series", "unnest", "regexp_matches", "regexp_split_to_table":
		return true
	}
	return false
}
