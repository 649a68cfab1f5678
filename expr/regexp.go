package expr

import (
	"regexp"
	"strings"
	"sync"

	"streamdb/sqlerr"
	"streamdb/types"
)

// regexp_like(string, pattern [, flags]): PostgreSQL 15's function, and
// what a ~ b and a !~ b are bound as. Patterns are read by Go's RE2, which
// agrees with PostgreSQL's advanced regular expressions on the usual forms
// (anchors, classes, alternation, repetition); back-references and
// look-around are refused with 2201B. Flags: i (case-insensitive), c
// (case-sensitive, the default), s, n or m, p, w (newline sensitivity, see
// regexpCache.compile), q (literal) and t; x, b and e are refused with
// 0A000. In n and p modes a negated bracket ([^x]) does not match a
// newline, as PostgreSQL's newline-sensitive rules say.
func regexpLike(name string, args []Expr) (Expr, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, wrongArgs(name, args)
	}
	want := []types.Type{types.Text, types.Text, types.Text}[:len(args)]
	a, err := castArgs(args, want...)
	if err != nil {
		return nil, err
	}
	var cache regexpCache
	return &Func{Name: name, Args: a, T: types.Bool, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		flags := ""
		if len(v) == 3 {
			flags = v[2].S
		}
		re, err := cache.compile(v[1].S, flags)
		if err != nil {
			return types.Null, err
		}
		return types.NewBool(re.MatchString(v[0].S)), nil
	})}, nil
}

// regexpCache keeps the last compiled pattern: a pattern is nearly always
// a constant, so each row reuses it.
type regexpCache struct {
	mu          sync.Mutex
	pattern, fl string
	re          *regexp.Regexp
}

func (c *regexpCache) compile(pattern, flags string) (*regexp.Regexp, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.re != nil && c.pattern == pattern && c.fl == flags {
		return c.re, nil
	}
	// PostgreSQL's default: '.' matches a newline and ^, $ match at the
	// ends of the string only; n (or m) makes both newline-sensitive, p
	// only '.', w only ^ and $.
	fold, dotNL, multiLine, literal := false, true, false, false
	for _, f := range flags {
		switch f {
		case 'i':
			fold = true
		case 'c':
			fold = false
		case 's':
			dotNL, multiLine = true, false
		case 'n', 'm':
			dotNL, multiLine = false, true
		case 'p':
			dotNL, multiLine = false, false
		case 'w':
			dotNL, multiLine = true, true
		case 'q':
			literal = true
		case 't':
		case 'x', 'e', 'b':
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "regular expression option %q is not supported", string(f))
		default:
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid regular expression option: %q", string(f))
		}
	}
	prefix := "(?"
	if fold {
		prefix += "i"
	}
	if dotNL {
		prefix += "s"
	}
	if multiLine {
		prefix += "m"
	}
	prefix += ")"
	if prefix == "(?)" {
		prefix = ""
	}
	translated := regexp.QuoteMeta(pattern)
	if !literal {
		var err error
		// In n and p modes PostgreSQL's '.' and negated brackets both
		// stop at a newline (dotNL is false exactly then).
		if translated, err = translateARE(pattern, !dotNL); err != nil {
			return nil, err
		}
		translated = unicodeClasses(translated)
	}
	re, err := regexp.Compile(prefix + translated)
	if err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[:i]
		}
		return nil, sqlerr.New(sqlerr.InvalidRegularExpression, "invalid regular expression: %s", strings.TrimPrefix(msg, "error parsing regexp: "))
	}
	c.pattern, c.fl, c.re = pattern, flags, re
	return re, nil
}

// translateARE rewrites the escapes whose meaning differs between
// PostgreSQL's advanced regular expressions and RE2: \y and \Y are the
// word-boundary assertions (RE2's \b and \B), \b is a backspace, \B a
// backslash and \Z the end of the string. Back-references and \m, \M
// have no RE2 form and are refused rather than read differently. With
// nlStop (newline-sensitive modes) a negated bracket expression also
// excludes the newline, as '.' does there.
func translateARE(p string, nlStop bool) (string, error) {
	if !strings.Contains(p, `\`) && !(nlStop && strings.Contains(p, "[^")) {
		return p, nil
	}
	var b strings.Builder
	// closeAt is the index of the ']' that ends the negated bracket
	// expression being copied, or -1.
	closeAt := -1
	for i := 0; i < len(p); i++ {
		if i == closeAt {
			b.WriteString(`\n]`)
			closeAt = -1
			continue
		}
		if nlStop && closeAt < 0 && p[i] == '[' && i+1 < len(p) && p[i+1] == '^' {
			closeAt = bracketEnd(p, i)
		}
		if p[i] != '\\' || i+1 == len(p) {
			b.WriteByte(p[i])
			continue
		}
		i++
		switch c := p[i]; {
		case c == 'y':
			b.WriteString(`\b`)
		case c == 'Y':
			b.WriteString(`\B`)
		case c == 'b':
			b.WriteString(`\x08`)
		case c == 'B':
			b.WriteString(`\\`)
		case c == 'Z':
			b.WriteString(`\z`)
		case c >= '1' && c <= '9':
			return "", sqlerr.New(sqlerr.InvalidRegularExpression, "invalid regular expression: back-references such as \\%c are not supported", c)
		case c == 'm' || c == 'M':
			return "", sqlerr.New(sqlerr.InvalidRegularExpression, "invalid regular expression: the word-start and word-end assertions \\m and \\M are not supported; use \\y")
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// posixClasses are the character classes whose members PostgreSQL takes
// from the locale (the database's C.UTF-8, where letters are Unicode's)
// but RE2 keeps to ASCII. The digit and space classes are ASCII in
// C.UTF-8 too and stay as they are.
var posixClasses = strings.NewReplacer(
	"[:alpha:]", `\p{L}`,
	"[:alnum:]", `\p{L}\p{Nd}`,
	"[:upper:]", `\p{Lu}`,
	"[:lower:]", `\p{Ll}`,
)

// unicodeClasses rewrites, inside each bracket expression of an RE2
// pattern, the classes of posixClasses to their Unicode forms, so that
// [[:alpha:]] matches 'é' and '日' as in PostgreSQL. Escaped brackets and
// a bracket expression's first ']' are left alone (bracketEnd).
func unicodeClasses(p string) string {
	if !strings.Contains(p, "[:") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			b.WriteString(p[i : i+2])
			i++
		case p[i] == '[':
			end := bracketEnd(p, i)
			if end < 0 {
				b.WriteString(p[i:])
				return b.String()
			}
			b.WriteByte('[')
			b.WriteString(posixClasses.Replace(p[i+1 : end+1]))
			i = end
		default:
			b.WriteByte(p[i])
		}
	}
	return b.String()
}

// bracketEnd returns the index of the ']' closing the bracket expression
// that opens at p[start] ('['), or -1 if it is not closed. A ']' first in
// the list (after an optional '^') is a member, [:class:], [.coll.] and
// [=equiv=] are skipped whole, and a backslash escapes the next byte.
func bracketEnd(p string, start int) int {
	i := start + 1
	if i < len(p) && p[i] == '^' {
		i++
	}
	if i < len(p) && p[i] == ']' {
		i++
	}
	for ; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			if i+1 < len(p) && (p[i+1] == ':' || p[i+1] == '.' || p[i+1] == '=') {
				if j := strings.Index(p[i+2:], string(p[i+1])+"]"); j >= 0 {
					i += 2 + j + 1
				}
			}
		case ']':
			return i
		}
	}
	return -1
}
