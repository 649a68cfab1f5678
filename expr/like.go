package expr

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"streamdb/sqlerr"
	"streamdb/types"
)

// like builds LIKE / ILIKE. A constant pattern is compiled once.
func like(op string, l, r Expr, _ bool) (Expr, error) {
	var err error
	if l, err = Cast(l, types.Text); err != nil {
		return nil, err
	}
	if r, err = Cast(r, types.Text); err != nil {
		return nil, err
	}
	fold := op == "ILIKE"
	var cached *likePattern
	if c, ok := r.(*Const); ok && !c.D.IsNull() {
		p := likeRegexp(c.D.S, fold)
		cached = &p
	}
	return &Func{Name: op, Infix: true, Args: []Expr{l, r}, T: types.Bool, Fn: func(a []types.Datum) (types.Datum, error) {
		if a[0].IsNull() || a[1].IsNull() {
			return types.Null, nil
		}
		p := cached
		if p == nil {
			compiled := likeRegexp(a[1].S, fold)
			p = &compiled
		}
		ok, err := p.match(a[0].S)
		if err != nil {
			return types.Null, err
		}
		return types.NewBool(ok), nil
	}}, nil
}

// likePattern is a compiled LIKE pattern. A pattern that ends in a lone
// escape character matches nothing; as in PostgreSQL, comparing it is an
// error only when the text reaches the escape with characters left over.
type likePattern struct {
	re       *regexp.Regexp
	dangling *regexp.Regexp // prefix before a trailing escape, else nil
}

func (p likePattern) match(s string) (bool, error) {
	if p.dangling == nil {
		return p.re.MatchString(s), nil
	}
	if p.dangling.MatchString(s) {
		return false, sqlerr.New(sqlerr.InvalidEscapeSequence, "LIKE pattern must not end with escape character")
	}
	return false, nil
}

// likeRegexp translates a LIKE pattern to an anchored regexp. It walks the
// pattern by rune: '_' matches one character, not one byte, and a multi-byte
// character is quoted whole.
func likeRegexp(pattern string, fold bool) likePattern {
	var sb strings.Builder
	sb.WriteString("^")
	if fold {
		sb.WriteString("(?is)")
	} else {
		sb.WriteString("(?s)")
	}
	escaped := false
	for _, c := range pattern {
		switch {
		case escaped:
			escaped = false
			sb.WriteString(regexp.QuoteMeta(string(c)))
		case c == '\\':
			escaped = true
		case c == '%':
			sb.WriteString(".*")
		case c == '_':
			sb.WriteString(".")
		default:
			sb.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if escaped {
		return likePattern{dangling: regexp.MustCompile(sb.String() + ".+$")}
	}
	sb.WriteString("$")
	return likePattern{re: regexp.MustCompile(sb.String())}
}

// LikeEscape is PostgreSQL's like_escape: pattern, written with esc as
// its escape character ("" for none), rewritten with backslash as the
// escape, the form LIKE matches. An escape character makes the next
// character literal, a backslash becomes a literal one, and "" makes
// every backslash literal.
func LikeEscape(pattern, esc string) (string, error) {
	if utf8.RuneCountInString(esc) > 1 {
		return "", sqlerr.New(sqlerr.InvalidEscapeSequence, "invalid escape string").
			WithHint("Escape string must be empty or one character.")
	}
	switch esc {
	case `\`:
		return pattern, nil
	case "":
		return strings.ReplaceAll(pattern, `\`, `\\`), nil
	}
	e, _ := utf8.DecodeRuneInString(esc)
	var b strings.Builder
	afterEscape := false
	for _, c := range pattern {
		switch {
		case c == e && !afterEscape:
			b.WriteByte('\\')
			afterEscape = true
		case c == '\\':
			// Doubled unless the escape character made it literal.
			b.WriteByte('\\')
			if !afterEscape {
				b.WriteByte('\\')
			}
			afterEscape = false
		default:
			b.WriteRune(c)
			afterEscape = false
		}
	}
	return b.String(), nil
}
