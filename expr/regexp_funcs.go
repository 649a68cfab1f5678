package expr

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"streamdb/sqlerr"
	"streamdb/types"
)

// regexpFunc builds regexp_replace, regexp_match, regexp_count and
// regexp_split_to_array over the patterns regexpLike reads (RE2 syntax
// where it agrees with PostgreSQL's; back-references and look-around are
// refused with 2201B). Their text[] results are values in the array text
// form, as string_to_array's are. ok is false for other names.
func regexpFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	n := len(args)
	var want []types.Type
	switch name {
	case "regexp_replace":
		if n != 3 && n != 4 {
			return nil, true, wrongArgs(name, args)
		}
	case "regexp_match", "regexp_split_to_array":
		if n != 2 && n != 3 {
			return nil, true, wrongArgs(name, args)
		}
	case "regexp_count":
		if n < 2 || n > 4 {
			return nil, true, wrongArgs(name, args)
		}
		want = []types.Type{types.Text, types.Text, types.Int4, types.Text}[:n]
	case "regexp_matches", "regexp_split_to_table":
		// Set-returning: bound by the query binder (SetFunction), which
		// allows them in FROM and in the select list only.
		return nil, true, sqlerr.New(sqlerr.FeatureNotSupported, "set-returning function %s() is only allowed in FROM and in the select list", name).
			WithHint("You might be able to move the set-returning function into a LATERAL FROM item.")
	default:
		return nil, false, nil
	}
	if want == nil {
		want = []types.Type{types.Text}
	}
	for i, a := range args {
		w := want[min(i, len(want)-1)]
		if t := a.Type(); t != types.Unknown && (w.IsString() && !t.IsString() || w.IsInteger() && t != types.Int4 && t != types.Int2) {
			return nil, true, wrongArgs(name, args)
		}
	}
	a, err := castArgs(args, want...)
	if err != nil {
		return nil, true, err
	}
	var cache regexpCache
	compile := func(pattern, flags string, global bool) (*regexp.Regexp, bool, error) {
		return cache.compileFor(name, pattern, flags, global)
	}
	flagAt := func(v []types.Datum, i int) string {
		if len(v) > i {
			return v[i].S
		}
		return ""
	}
	switch name {
	case "regexp_replace":
		return &Func{Name: name, Args: a, T: types.Text, Fn: strict(func(v []types.Datum) (types.Datum, error) {
			re, g, err := compile(v[1].S, flagAt(v, 3), true)
			if err != nil {
				return types.Null, err
			}
			return types.NewString(regexpReplace(re, v[0].S, v[2].S, g)), nil
		})}, true, nil
	case "regexp_match":
		return &Func{Name: name, Args: a, T: types.ArrayOf(types.Text), Fn: strict(func(v []types.Datum) (types.Datum, error) {
			re, _, err := compile(v[1].S, flagAt(v, 2), false)
			if err != nil {
				return types.Null, err
			}
			m := re.FindStringSubmatchIndex(v[0].S)
			if m == nil {
				return types.Null, nil
			}
			return types.NewString(matchArray(v[0].S, m)), nil
		})}, true, nil
	case "regexp_count":
		return &Func{Name: name, Args: a, T: types.Int4, Fn: strict(func(v []types.Datum) (types.Datum, error) {
			re, _, err := compile(v[1].S, flagAt(v, 3), false)
			if err != nil {
				return types.Null, err
			}
			s := v[0].S
			if len(v) > 2 {
				if v[2].I <= 0 {
					return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"%s\": %d", "start", v[2].I)
				}
				r := []rune(s)
				s = string(r[min(int(v[2].I)-1, len(r)):])
			}
			return types.NewInt(int64(len(allMatches(re, s, -1)))), nil
		})}, true, nil
	}
	// regexp_split_to_array
	return &Func{Name: name, Args: a, T: types.ArrayOf(types.Text), Fn: strict(func(v []types.Datum) (types.Datum, error) {
		re, _, err := compile(v[1].S, flagAt(v, 2), false)
		if err != nil {
			return types.Null, err
		}
		var elems []types.Datum
		for _, e := range regexpSplit(re, v[0].S) {
			elems = append(elems, types.NewString(e))
		}
		return types.NewString(FormatTextArray(elems)), nil
	})}, true, nil
}

// compileFor compiles pattern for function name. With global the g flag
// is taken out of flags and reported; without it g is refused, as
// PostgreSQL refuses it for the functions that find one match.
func (c *regexpCache) compileFor(name, pattern, flags string, global bool) (*regexp.Regexp, bool, error) {
	g := false
	if global {
		g = strings.Contains(flags, "g")
		flags = strings.ReplaceAll(flags, "g", "")
	} else if strings.Contains(flags, "g") {
		err := sqlerr.New(sqlerr.InvalidParameterValue, "%s() does not support the \"global\" option", name)
		if name == "regexp_match" {
			err = err.WithHint("Use the regexp_matches function instead.")
		}
		return nil, false, err
	}
	re, err := c.compile(pattern, flags)
	return re, g, err
}

// matchArray is the text[] (in text form) of one match m of a pattern in
// s: its groups, NULL for a group that took no part, or the whole match
// when the pattern has no groups.
func matchArray(s string, m []int) string {
	if len(m) == 2 {
		return FormatTextArray([]types.Datum{types.NewString(s[m[0]:m[1]])})
	}
	elems := make([]types.Datum, 0, len(m)/2-1)
	for i := 2; i < len(m); i += 2 {
		if m[i] < 0 {
			elems = append(elems, types.Null)
		} else {
			elems = append(elems, types.NewString(s[m[i]:m[i+1]]))
		}
	}
	return FormatTextArray(elems)
}

// regexpSplit is s split at the matches of re. As in PostgreSQL, a match
// splits only if it starts before the end and ends after the last split:
// empty matches at either end or right after a split do not.
func regexpSplit(re *regexp.Regexp, s string) []string {
	var out []string
	start := 0
	for _, m := range allMatches(re, s, -1) {
		if m[0] >= len(s) || m[1] <= start {
			continue
		}
		out = append(out, s[start:m[0]])
		start = m[1]
	}
	return append(out, s[start:])
}

// regexpReplace replaces the first match of re in s (every match when
// global) by repl, in which \1 to \9 stand for the groups, \& for the
// whole match and \\ for a backslash.
func regexpReplace(re *regexp.Regexp, s, repl string, global bool) string {
	limit := 1
	if global {
		limit = -1
	}
	matches := allMatches(re, s, limit)
	if matches == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		b.WriteString(s[last:m[0]])
		for i := 0; i < len(repl); i++ {
			c := repl[i]
			if c != '\\' || i+1 == len(repl) {
				b.WriteByte(c)
				continue
			}
			i++
			switch d := repl[i]; {
			case d >= '1' && d <= '9':
				if g := int(d - '0'); 2*g+1 < len(m) && m[2*g] >= 0 {
					b.WriteString(s[m[2*g]:m[2*g+1]])
				}
			case d == '&':
				b.WriteString(s[m[0]:m[1]])
			case d == '\\':
				b.WriteByte('\\')
			default:
				b.WriteByte('\\')
				b.WriteByte(d)
			}
		}
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// allMatches is the successive matches of re in s (at most limit, or all
// when limit < 0) as PostgreSQL finds them: each search starts where the
// last match ended, one character further after an empty match, so an
// empty match right after a longer one counts (Go's FindAll drops it).
// Patterns whose assertions look before the search start (^, \b, \B) keep
// Go's iteration, which cannot see the context of a substring search.
func allMatches(re *regexp.Regexp, s string, limit int) [][]int {
	if looksBehind(re) {
		return re.FindAllStringSubmatchIndex(s, limit)
	}
	var out [][]int
	for pos := 0; pos <= len(s) && (limit < 0 || len(out) < limit); {
		m := re.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		for i := range m {
			if m[i] >= 0 {
				m[i] += pos
			}
		}
		out = append(out, m)
		if m[1] > m[0] {
			pos = m[1]
			continue
		}
		if m[1] == len(s) {
			break
		}
		_, size := utf8.DecodeRuneInString(s[m[1]:])
		pos = m[1] + size
	}
	return out
}

// looksBehind reports whether re has an assertion that depends on the
// text before the position it is tried at.
func looksBehind(re *regexp.Regexp) bool {
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return true
	}
	found := false
	var walk func(*syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		switch r.Op {
		case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			found = true
		}
		for _, c := range r.Sub {
			walk(c)
		}
	}
	walk(t)
	return found
}
