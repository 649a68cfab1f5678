package expr

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
	"streamdb/types"
)

// SQL/JSON path expressions (PostgreSQL's jsonpath) as the jsonb_path_*
// functions and the @? and @@ operators read them: lax (the default) and
// strict modes; $, @, $var; .key, ."key", .*, [n], [a to b], [last], [*];
// filters ? (...) with ==, !=, <>, <, <=, >, >=, &&, ||, !, exists(),
// like_regex (flag "i", "s", "m", "x", "q"), starts with, is unknown;
// arithmetic + - * / % and unary + -; the item methods type(), size(),
// double(), abs(), floor() and ceiling(). A path is parsed when it is
// used; its value is a sequence of JSON items.
//
// In lax mode, structural errors (a member of a non-object, a subscript
// out of bounds) give no items, and arrays are unwrapped where an
// accessor, a filter, a method or a comparison wants single items; in
// strict mode they are errors. Errors inside a filter make its predicate
// unknown.

type jpKind uint8

const (
	jpRoot jpKind = iota
	jpCurrent
	jpVar
	jpLiteral
	jpLast
	jpArith   // op, l, r (r nil: unary)
	jpCompare // op, l, r
	jpAnd
	jpOr
	jpNot
	jpIsUnknown
	jpExists
	jpLikeRegex  // l, re
	jpStartsWith // l, r
	jpAccess     // l followed by steps
)

type jpStepKind uint8

const (
	stepMember jpStepKind = iota
	stepAnyMember
	stepIndex
	stepAnyIndex
	stepFilter
	stepMethod
)

type jpSub struct {
	from, to *jpNode // to nil: a single index
}

type jpStep struct {
	kind   jpStepKind
	key    string  // member, method name
	subs   []jpSub // index
	filter *jpNode // filter predicate
}

type jpNode struct {
	kind  jpKind
	op    string
	name  string // variable
	val   *types.JSONValue
	l, r  *jpNode
	steps []jpStep
	re    *regexp.Regexp
}

// parsedPath is a parsed path: its mode and expression.
type parsedPath struct {
	strict bool
	expr   *jpNode
}

// isPredicate reports whether n gives a boolean (a predicate) rather
// than a sequence of items.
func (n *jpNode) isPredicate() bool {
	switch n.kind {
	case jpCompare, jpAnd, jpOr, jpNot, jpIsUnknown, jpExists, jpLikeRegex, jpStartsWith:
		return true
	}
	return false
}

func jsonPathSyntax(src, format string, args ...any) error {
	e := sqlerr.New(sqlerr.SyntaxError, format, args...)
	e.Detail = "In the jsonpath " + strconv.Quote(src) + "."
	return e
}

// jpToken is one token of a path.
type jpToken struct {
	kind byte // 'o' operator/punctuation, 'w' word, 's' string, 'n' number, 'v' variable, 'e' end
	val  string
}

type jpParser struct {
	src  string
	toks []jpToken
	i    int
	// inFilter and inSubscript allow @ and last.
	inFilter, inSubscript int
}

func lexJSONPath(src string) ([]jpToken, error) {
	var out []jpToken
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '"':
			s, n, err := jpString(src, i)
			if err != nil {
				return nil, err
			}
			out = append(out, jpToken{'s', s})
			i = n
		case c == '$':
			j := i + 1
			if j < len(src) && src[j] == '"' {
				s, n, err := jpString(src, j)
				if err != nil {
					return nil, err
				}
				out = append(out, jpToken{'v', s})
				i = n
				continue
			}
			for j < len(src) && isJPWordByte(src[j]) {
				j++
			}
			if j == i+1 {
				out = append(out, jpToken{'o', "$"})
			} else {
				out = append(out, jpToken{'v', src[i+1 : j]})
			}
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			if j+1 < len(src) && src[j] == '.' && src[j+1] >= '0' && src[j+1] <= '9' {
				j++
				for j < len(src) && src[j] >= '0' && src[j] <= '9' {
					j++
				}
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && src[k] >= '0' && src[k] <= '9' {
					for k < len(src) && src[k] >= '0' && src[k] <= '9' {
						k++
					}
					j = k
				}
			}
			if j < len(src) && isJPWordByte(src[j]) {
				return nil, jsonPathSyntax(src, "trailing junk after numeric literal at or near \"%s\" of jsonpath input", src[i:j+1])
			}
			out = append(out, jpToken{'n', src[i:j]})
			i = j
		case isJPWordByte(c):
			j := i
			for j < len(src) && isJPWordByte(src[j]) {
				j++
			}
			out = append(out, jpToken{'w', src[i:j]})
			i = j
		default:
			op := string(c)
			if i+1 < len(src) {
				two := src[i : i+2]
				switch two {
				case "==", "!=", "<>", "<=", ">=", "&&", "||", "**":
					op = two
				}
			}
			if !strings.Contains("$@.[](),*?=!<>&|+-/%:", op[:1]) || op == "=" || op == "&" || op == "|" || op == ":" {
				return nil, jsonPathSyntax(src, "syntax error at or near \"%s\" of jsonpath input", op)
			}
			out = append(out, jpToken{'o', op})
			i += len(op)
		}
	}
	return append(out, jpToken{kind: 'e'}), nil
}

func isJPWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// jpString reads the double-quoted string at src[i].
func jpString(src string, i int) (string, int, error) {
	var sb strings.Builder
	j := i + 1
	for j < len(src) {
		c := src[j]
		switch c {
		case '"':
			return sb.String(), j + 1, nil
		case '\\':
			if j+1 >= len(src) {
				return "", 0, jsonPathSyntax(src, "unexpected end of input in jsonpath string")
			}
			e := src[j+1]
			j += 2
			switch e {
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'v':
				sb.WriteByte('\v')
			case 'u':
				r, n, ok := jpUnicode(src, j)
				if !ok {
					return "", 0, jsonPathSyntax(src, "invalid Unicode escape sequence in jsonpath string")
				}
				if r == 0 {
					return "", 0, &sqlerr.Error{Code: sqlerr.UntranslatableCharacter, Message: "unsupported Unicode escape sequence",
						Detail: "\\u0000 cannot be converted to text."}
				}
				sb.WriteRune(r)
				j = n
			case 'x':
				if j+1 < len(src) && isHex(src[j]) && isHex(src[j+1]) {
					v, _ := strconv.ParseUint(src[j:j+2], 16, 8)
					sb.WriteRune(rune(v))
					j += 2
				} else {
					return "", 0, jsonPathSyntax(src, "invalid hexadecimal character sequence in jsonpath string")
				}
			default:
				sb.WriteByte(e)
			}
		default:
			sb.WriteByte(c)
			j++
		}
	}
	return "", 0, jsonPathSyntax(src, "unexpected end of input in jsonpath string")
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// jpUnicode reads XXXX or {X...} after \u (and a following low surrogate).
func jpUnicode(src string, j int) (rune, int, bool) {
	read := func(j int) (rune, int, bool) {
		if j < len(src) && src[j] == '{' {
			k := j + 1
			for k < len(src) && isHex(src[k]) && k-j <= 6 {
				k++
			}
			if k == j+1 || k >= len(src) || src[k] != '}' {
				return 0, 0, false
			}
			v, _ := strconv.ParseUint(src[j+1:k], 16, 32)
			return rune(v), k + 1, true
		}
		if j+4 > len(src) {
			return 0, 0, false
		}
		for k := j; k < j+4; k++ {
			if !isHex(src[k]) {
				return 0, 0, false
			}
		}
		v, _ := strconv.ParseUint(src[j:j+4], 16, 32)
		return rune(v), j + 4, true
	}
	r, n, ok := read(j)
	if !ok {
		return 0, 0, false
	}
	if utf16.IsSurrogate(r) {
		if n+1 < len(src) && src[n] == '\\' && src[n+1] == 'u' {
			r2, n2, ok := read(n + 2)
			if ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return d, n2, true
				}
			}
		}
		return 0, 0, false
	}
	return r, n, true
}

// parseJSONPath parses the text of a jsonpath.
func parseJSONPath(src string) (*parsedPath, error) {
	toks, err := lexJSONPath(src)
	if err != nil {
		return nil, err
	}
	p := &jpParser{src: src, toks: toks}
	jp := &parsedPath{}
	if p.peek().kind == 'w' {
		switch p.peek().val {
		case "strict":
			jp.strict = true
			p.i++
		case "lax":
			p.i++
		}
	}
	if jp.expr, err = p.or(); err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != 'e' {
		return nil, p.syntax(t)
	}
	return jp, nil
}

func (p *jpParser) peek() jpToken { return p.toks[p.i] }

func (p *jpParser) isOp(v string) bool {
	t := p.toks[p.i]
	return t.kind == 'o' && t.val == v
}

func (p *jpParser) isWord(v string) bool {
	t := p.toks[p.i]
	return t.kind == 'w' && t.val == v
}

func (p *jpParser) syntax(t jpToken) error {
	if t.kind == 'e' {
		return jsonPathSyntax(p.src, "syntax error at end of jsonpath input")
	}
	v := t.val
	if t.kind == 's' {
		v = strconv.Quote(v)
	}
	return jsonPathSyntax(p.src, "syntax error at or near \"%s\" of jsonpath input", v)
}

func (p *jpParser) expect(op string) error {
	if !p.isOp(op) {
		return p.syntax(p.peek())
	}
	p.i++
	return nil
}

func (p *jpParser) or() (*jpNode, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.isOp("||") {
		p.i++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		if !l.isPredicate() || !r.isPredicate() {
			return nil, jsonPathSyntax(p.src, "syntax error at or near \"||\" of jsonpath input")
		}
		l = &jpNode{kind: jpOr, l: l, r: r}
	}
	return l, nil
}

func (p *jpParser) and() (*jpNode, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.isOp("&&") {
		p.i++
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		if !l.isPredicate() || !r.isPredicate() {
			return nil, jsonPathSyntax(p.src, "syntax error at or near \"&&\" of jsonpath input")
		}
		l = &jpNode{kind: jpAnd, l: l, r: r}
	}
	return l, nil
}

func (p *jpParser) not() (*jpNode, error) {
	if p.isOp("!") {
		p.i++
		if !p.isOp("(") {
			return nil, p.syntax(p.peek())
		}
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		if !x.isPredicate() {
			return nil, jsonPathSyntax(p.src, "syntax error at or near \"!\" of jsonpath input")
		}
		return &jpNode{kind: jpNot, l: x}, nil
	}
	return p.predicate()
}

func (p *jpParser) predicate() (*jpNode, error) {
	if p.isWord("exists") && p.toks[p.i+1].kind == 'o' && p.toks[p.i+1].val == "(" {
		p.i += 2
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		return p.isUnknown(&jpNode{kind: jpExists, l: x})
	}
	l, err := p.additive()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == 'o' && (t.val == "==" || t.val == "!=" || t.val == "<>" || t.val == "<" || t.val == "<=" || t.val == ">" || t.val == ">="):
		p.i++
		r, err := p.additive()
		if err != nil {
			return nil, err
		}
		if l.isPredicate() || r.isPredicate() {
			return nil, p.syntax(t)
		}
		op := t.val
		if op == "<>" {
			op = "!="
		}
		return &jpNode{kind: jpCompare, op: op, l: l, r: r}, nil
	case t.kind == 'w' && t.val == "like_regex":
		p.i++
		pat := p.peek()
		if pat.kind != 's' {
			return nil, p.syntax(pat)
		}
		p.i++
		flags := ""
		if p.isWord("flag") {
			p.i++
			f := p.peek()
			if f.kind != 's' {
				return nil, p.syntax(f)
			}
			p.i++
			flags = f.val
		}
		re, err := jpRegexp(p.src, pat.val, flags)
		if err != nil {
			return nil, err
		}
		return &jpNode{kind: jpLikeRegex, l: l, re: re}, nil
	case t.kind == 'w' && t.val == "starts" && p.toks[p.i+1].kind == 'w' && p.toks[p.i+1].val == "with":
		p.i += 2
		var r *jpNode
		switch s := p.peek(); s.kind {
		case 's':
			p.i++
			r = &jpNode{kind: jpLiteral, val: types.JSONStringValue(s.val)}
		case 'v':
			p.i++
			r = &jpNode{kind: jpVar, name: s.val}
		default:
			return nil, p.syntax(s)
		}
		return &jpNode{kind: jpStartsWith, l: l, r: r}, nil
	}
	if l.isPredicate() {
		return p.isUnknown(l)
	}
	return l, nil
}

// isUnknown reads "is unknown" after the parenthesized predicate x.
func (p *jpParser) isUnknown(x *jpNode) (*jpNode, error) {
	if p.isWord("is") {
		p.i++
		if !p.isWord("unknown") {
			return nil, p.syntax(p.peek())
		}
		p.i++
		return &jpNode{kind: jpIsUnknown, l: x}, nil
	}
	return x, nil
}

func (p *jpParser) additive() (*jpNode, error) {
	l, err := p.multiplicative()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.peek().val
		p.i++
		r, err := p.multiplicative()
		if err != nil {
			return nil, err
		}
		l = &jpNode{kind: jpArith, op: op, l: l, r: r}
	}
	return l, nil
}

func (p *jpParser) multiplicative() (*jpNode, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("%") {
		op := p.peek().val
		p.i++
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = &jpNode{kind: jpArith, op: op, l: l, r: r}
	}
	return l, nil
}

func (p *jpParser) unary() (*jpNode, error) {
	if p.isOp("+") || p.isOp("-") {
		op := p.peek().val
		p.i++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if x.kind == jpLiteral && x.val.Kind == types.JSONNumber && op == "-" {
			var d apd.Decimal
			d.Neg(x.val.Num)
			return &jpNode{kind: jpLiteral, val: types.JSONNumberValue(&d)}, nil
		}
		if x.kind == jpLiteral && x.val.Kind == types.JSONNumber {
			return x, nil
		}
		return &jpNode{kind: jpArith, op: op, l: x}, nil
	}
	return p.accessors()
}

func (p *jpParser) accessors() (*jpNode, error) {
	base, err := p.primary()
	if err != nil {
		return nil, err
	}
	var steps []jpStep
	for {
		switch {
		case p.isOp("."):
			p.i++
			t := p.peek()
			switch {
			case t.kind == 'o' && t.val == "*":
				p.i++
				steps = append(steps, jpStep{kind: stepAnyMember})
			case t.kind == 's':
				p.i++
				steps = append(steps, jpStep{kind: stepMember, key: t.val})
			case t.kind == 'w' || t.kind == 'n' && !strings.ContainsAny(t.val, ".eE"):
				p.i++
				if p.isOp("(") {
					if !jpMethods[t.val] {
						return nil, jsonPathSyntax(p.src, "syntax error at or near \"(\" of jsonpath input")
					}
					p.i++
					if err := p.expect(")"); err != nil {
						return nil, err
					}
					steps = append(steps, jpStep{kind: stepMethod, key: t.val})
					continue
				}
				steps = append(steps, jpStep{kind: stepMember, key: t.val})
			case t.kind == 'v':
				// $."x" is read as a variable by the lexer only after $.
				return nil, p.syntax(t)
			default:
				return nil, p.syntax(t)
			}
		case p.isOp("["):
			p.i++
			if p.isOp("*") {
				p.i++
				if err := p.expect("]"); err != nil {
					return nil, err
				}
				steps = append(steps, jpStep{kind: stepAnyIndex})
				continue
			}
			var subs []jpSub
			p.inSubscript++
			for {
				from, err := p.additive()
				if err != nil {
					return nil, err
				}
				s := jpSub{from: from}
				if p.isWord("to") {
					p.i++
					if s.to, err = p.additive(); err != nil {
						return nil, err
					}
				}
				subs = append(subs, s)
				if p.isOp(",") {
					p.i++
					continue
				}
				break
			}
			p.inSubscript--
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			steps = append(steps, jpStep{kind: stepIndex, subs: subs})
		case p.isOp("?"):
			p.i++
			if err := p.expect("("); err != nil {
				return nil, err
			}
			p.inFilter++
			f, err := p.or()
			if err != nil {
				return nil, err
			}
			p.inFilter--
			if !f.isPredicate() {
				return nil, p.syntax(p.peek())
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			steps = append(steps, jpStep{kind: stepFilter, filter: f})
		default:
			if len(steps) == 0 {
				return base, nil
			}
			return &jpNode{kind: jpAccess, l: base, steps: steps}, nil
		}
	}
}

var jpMethods = map[string]bool{"type": true, "size": true, "double": true, "abs": true, "floor": true, "ceiling": true}

func (p *jpParser) primary() (*jpNode, error) {
	t := p.peek()
	p.i++
	switch t.kind {
	case 'o':
		switch t.val {
		case "$":
			return &jpNode{kind: jpRoot}, nil
		case "@":
			if p.inFilter == 0 {
				return nil, jsonPathSyntax(p.src, "@ is not allowed in root expressions")
			}
			return &jpNode{kind: jpCurrent}, nil
		case "(":
			x, err := p.or()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			if x.isPredicate() {
				return p.isUnknown(x)
			}
			return x, nil
		}
	case 'v':
		return &jpNode{kind: jpVar, name: t.val}, nil
	case 's':
		return &jpNode{kind: jpLiteral, val: types.JSONStringValue(t.val)}, nil
	case 'n':
		var d apd.Decimal
		if _, _, err := d.SetString(t.val); err != nil {
			return nil, p.syntax(t)
		}
		return &jpNode{kind: jpLiteral, val: types.JSONNumberValue(&d)}, nil
	case 'w':
		switch t.val {
		case "true", "false":
			return &jpNode{kind: jpLiteral, val: types.JSONBoolValue(t.val == "true")}, nil
		case "null":
			return &jpNode{kind: jpLiteral, val: types.JSONNullValue()}, nil
		case "last":
			if p.inSubscript == 0 {
				return nil, jsonPathSyntax(p.src, "LAST is allowed only in array subscripts")
			}
			return &jpNode{kind: jpLast}, nil
		}
	}
	p.i--
	return nil, p.syntax(t)
}

// jpRegexp compiles a like_regex pattern with its flags.
func jpRegexp(src, pat, flags string) (*regexp.Regexp, error) {
	prefix := ""
	quote := false
	for _, f := range flags {
		switch f {
		case 'i':
			prefix += "i"
		case 's':
			prefix += "s"
		case 'm':
			prefix += "m"
		case 'x':
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "XQuery \"x\" flag (expanded regular expressions) is not implemented")
		case 'q':
			quote = true
		default:
			return nil, &sqlerr.Error{Code: sqlerr.SyntaxError, Message: "invalid input syntax for type jsonpath",
				Detail: "Unrecognized flag character \"" + string(f) + "\" in LIKE_REGEX predicate."}
		}
	}
	if quote {
		pat = regexp.QuoteMeta(pat)
	}
	if prefix != "" {
		pat = "(?" + prefix + ")" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidRegularExpression, "invalid regular expression: %v", err)
	}
	return re, nil
}

// jpBool is a predicate's value: true, false or unknown.
type jpBool uint8

const (
	jpFalse jpBool = iota
	jpTrue
	jpUnknown
)

// jpCtx is the state of one evaluation.
type jpCtx struct {
	root   *types.JSONValue
	vars   *types.JSONValue // an object, or nil
	strict bool
	// fatal is an error no predicate turns into unknown (a variable
	// the path names but vars lacks).
	fatal error
}

// unknown makes a predicate whose operand failed with err unknown, and
// keeps err if it is fatal.
func (c *jpCtx) unknown(err error) jpBool {
	if _, ok := err.(*jpError); !ok && c.fatal == nil {
		c.fatal = err
	}
	return jpUnknown
}

// jpError is an error of a path's evaluation: structural ones (which lax
// mode ignores) and others.
type jpError struct {
	err        error
	structural bool
}

func (e *jpError) Error() string { return e.err.Error() }

func jpStructural(code, format string, args ...any) error {
	return &jpError{err: sqlerr.New(code, format, args...), structural: true}
}

func jpFail(code, format string, args ...any) error {
	return &jpError{err: sqlerr.New(code, format, args...)}
}

// sqlError is the error a function reports.
func jpSQLError(err error) error {
	if e, ok := err.(*jpError); ok {
		return e.err
	}
	return err
}

// structuralErr gives nil in lax mode for a structural error.
func (c *jpCtx) structural(code, format string, args ...any) error {
	if !c.strict {
		return nil
	}
	return jpStructural(code, format, args...)
}

// seq evaluates n against the current item cur (nil outside filters) and
// last (the size-1 of the array being subscripted, -1 outside).
func (c *jpCtx) seq(n *jpNode, cur *types.JSONValue, last int64) ([]*types.JSONValue, error) {
	switch n.kind {
	case jpRoot:
		return []*types.JSONValue{c.root}, nil
	case jpCurrent:
		return []*types.JSONValue{cur}, nil
	case jpLiteral:
		return []*types.JSONValue{n.val}, nil
	case jpLast:
		if last < -1 {
			return nil, jpFail(sqlerr.SyntaxError, "evaluating jsonpath LAST outside of array subscript")
		}
		return []*types.JSONValue{types.JSONNumberValue(apd.New(last, 0))}, nil
	case jpVar:
		var v *types.JSONValue
		if c.vars != nil {
			v = c.vars.Lookup(n.name)
		}
		if v == nil {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "could not find jsonpath variable \"%s\"", n.name)
		}
		return []*types.JSONValue{v}, nil
	case jpArith:
		return c.arith(n, cur, last)
	case jpAccess:
		items, err := c.seq(n.l, cur, last)
		if err != nil {
			return nil, err
		}
		var out []*types.JSONValue
		err = c.steps(n.steps, items, last, &out)
		return out, err
	}
	// A predicate as a path's result: true, false or null (unknown).
	switch c.pred(n, cur, last) {
	case jpTrue:
		return []*types.JSONValue{types.JSONBoolValue(true)}, nil
	case jpFalse:
		return []*types.JSONValue{types.JSONBoolValue(false)}, nil
	}
	return []*types.JSONValue{types.JSONNullValue()}, nil
}

// steps applies steps to each of items depth first, as PostgreSQL's
// executor does, appending what the last step yields to out. On an error
// out holds the items found before it, which a silent evaluation returns
// (jsonb_path_query_array(..., silent => true) keeps them) and
// jsonb_path_exists, which stops at the first item, answers by.
func (c *jpCtx) steps(steps []jpStep, items []*types.JSONValue, last int64, out *[]*types.JSONValue) error {
	if len(steps) == 0 {
		*out = append(*out, items...)
		return nil
	}
	for _, it := range items {
		next, err := c.step(steps[0], it, last)
		// A step that fails part-way (the second subscript of $[0, 9]
		// out of bounds) hands on what it found before.
		if err := c.steps(steps[1:], next, last, out); err != nil {
			return err
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// unwrapped evaluates n and, in lax mode, replaces each array item by its
// elements.
func (c *jpCtx) unwrapped(n *jpNode, cur *types.JSONValue, last int64) ([]*types.JSONValue, error) {
	items, err := c.seq(n, cur, last)
	if err != nil || c.strict {
		return items, err
	}
	return unwrapArrays(items), nil
}

func unwrapArrays(items []*types.JSONValue) []*types.JSONValue {
	has := false
	for _, it := range items {
		has = has || it.Kind == types.JSONArray
	}
	if !has {
		return items
	}
	var out []*types.JSONValue
	for _, it := range items {
		if it.Kind == types.JSONArray {
			out = append(out, it.Elems...)
		} else {
			out = append(out, it)
		}
	}
	return out
}

var jpOpNames = map[string]string{"+": "+", "-": "-", "*": "*", "/": "/", "%": "%"}

func (c *jpCtx) arith(n *jpNode, cur *types.JSONValue, last int64) ([]*types.JSONValue, error) {
	if n.r == nil {
		items, err := c.unwrapped(n.l, cur, last)
		if err != nil {
			return nil, err
		}
		out := make([]*types.JSONValue, len(items))
		for i, it := range items {
			if it.Kind != types.JSONNumber {
				return nil, jpFail(sqlerr.SQLJSONNumberNotFound, "operand of unary jsonpath operator %s is not a numeric value", n.op)
			}
			out[i] = it
			if n.op == "-" {
				var d apd.Decimal
				d.Neg(it.Num)
				out[i] = types.JSONNumberValue(&d)
			}
		}
		return out, nil
	}
	single := func(x *jpNode, side string) (*apd.Decimal, error) {
		items, err := c.unwrapped(x, cur, last)
		if err != nil {
			return nil, err
		}
		if len(items) != 1 || items[0].Kind != types.JSONNumber {
			return nil, jpFail(sqlerr.SingletonSQLJSONItemRequired, "%s operand of jsonpath operator %s is not a single numeric value", side, n.op)
		}
		return items[0].Num, nil
	}
	a, err := single(n.l, "left")
	if err != nil {
		return nil, err
	}
	b, err := single(n.r, "right")
	if err != nil {
		return nil, err
	}
	e, err := Binary(jpOpNames[n.op], &Const{D: types.NewDecimal(a), T: types.Numeric}, &Const{D: types.NewDecimal(b), T: types.Numeric})
	if err != nil {
		return nil, err
	}
	d, err := e.Eval(nil)
	if err != nil {
		return nil, &jpError{err: err}
	}
	return []*types.JSONValue{types.JSONNumberValue(d.Decimal())}, nil
}

// step applies one accessor to item it.
func (c *jpCtx) step(s jpStep, it *types.JSONValue, last int64) ([]*types.JSONValue, error) {
	switch s.kind {
	case stepMember:
		if it.Kind == types.JSONArray && !c.strict {
			var out []*types.JSONValue
			for _, e := range it.Elems {
				if e.Kind == types.JSONObject {
					if v := e.Lookup(s.key); v != nil {
						out = append(out, v)
					}
				}
			}
			return out, nil
		}
		if it.Kind != types.JSONObject {
			return nil, c.structural(sqlerr.SQLJSONMemberNotFound, "jsonpath member accessor can only be applied to an object")
		}
		if v := it.Lookup(s.key); v != nil {
			return []*types.JSONValue{v}, nil
		}
		return nil, c.structural(sqlerr.SQLJSONMemberNotFound, "JSON object does not contain key \"%s\"", s.key)
	case stepAnyMember:
		if it.Kind == types.JSONArray && !c.strict {
			var out []*types.JSONValue
			for _, e := range it.Elems {
				if e.Kind == types.JSONObject {
					out = append(out, e.Vals...)
				}
			}
			return out, nil
		}
		if it.Kind != types.JSONObject {
			return nil, c.structural(sqlerr.SQLJSONObjectNotFound, "jsonpath wildcard member accessor can only be applied to an object")
		}
		return append([]*types.JSONValue(nil), it.Vals...), nil
	case stepAnyIndex:
		if it.Kind != types.JSONArray {
			if c.strict {
				return nil, jpStructural(sqlerr.SQLJSONArrayNotFound, "jsonpath wildcard array accessor can only be applied to an array")
			}
			return []*types.JSONValue{it}, nil
		}
		return append([]*types.JSONValue(nil), it.Elems...), nil
	case stepIndex:
		elems := it.Elems
		if it.Kind != types.JSONArray {
			if c.strict {
				return nil, jpStructural(sqlerr.SQLJSONArrayNotFound, "jsonpath array accessor can only be applied to an array")
			}
			elems = []*types.JSONValue{it}
		}
		size := int64(len(elems))
		var out []*types.JSONValue
		for _, sub := range s.subs {
			from, err := c.index(sub.from, it, size)
			if err != nil {
				return out, err
			}
			to := from
			if sub.to != nil {
				if to, err = c.index(sub.to, it, size); err != nil {
					return out, err
				}
			}
			if from < 0 || from >= size || to < 0 || to >= size || from > to {
				if c.strict {
					return out, jpStructural(sqlerr.InvalidSQLJSONSubscript, "jsonpath array subscript is out of bounds")
				}
			}
			from = max(from, 0)
			to = min(to, size-1)
			for i := from; i <= to; i++ {
				out = append(out, elems[i])
			}
		}
		return out, nil
	case stepFilter:
		items := []*types.JSONValue{it}
		if it.Kind == types.JSONArray && !c.strict {
			items = it.Elems
		}
		var out []*types.JSONValue
		for _, x := range items {
			if c.pred(s.filter, x, last) == jpTrue {
				out = append(out, x)
			}
		}
		return out, nil
	case stepMethod:
		return c.method(s.key, it)
	}
	return nil, nil
}

// index evaluates a subscript: a single number, truncated.
func (c *jpCtx) index(n *jpNode, arr *types.JSONValue, size int64) (int64, error) {
	items, err := c.seq(n, nil, size-1)
	if err != nil {
		return 0, err
	}
	if len(items) != 1 || items[0].Kind != types.JSONNumber {
		return 0, jpFail(sqlerr.InvalidSQLJSONSubscript, "jsonpath array subscript is not a single numeric value")
	}
	var t apd.Decimal
	if _, err := decCtx.RoundToIntegralValue(&t, items[0].Num); err != nil {
		return 0, err
	}
	if items[0].Num.Negative != t.Negative || t.Cmp(items[0].Num) != 0 {
		// truncate toward zero
		var q apd.Decimal
		cx := decCtx.WithPrecision(1000)
		cx.Rounding = apd.RoundDown
		if _, err := cx.Quantize(&q, items[0].Num, 0); err != nil {
			return 0, err
		}
		t = q
	}
	i, err := t.Int64()
	if err != nil || i > math.MaxInt32 || i < math.MinInt32 {
		return 0, jpFail(sqlerr.InvalidSQLJSONSubscript, "jsonpath array subscript is out of integer range")
	}
	return i, nil
}

func (c *jpCtx) method(name string, it *types.JSONValue) ([]*types.JSONValue, error) {
	switch name {
	case "type":
		return []*types.JSONValue{types.JSONStringValue(it.Kind.String())}, nil
	case "size":
		if it.Kind == types.JSONArray {
			return []*types.JSONValue{types.JSONNumberValue(apd.New(int64(len(it.Elems)), 0))}, nil
		}
		if c.strict {
			return nil, jpStructural(sqlerr.SQLJSONArrayNotFound, "jsonpath item method .size() can only be applied to an array")
		}
		return []*types.JSONValue{types.JSONNumberValue(apd.New(1, 0))}, nil
	}
	if it.Kind == types.JSONArray && !c.strict {
		var out []*types.JSONValue
		for _, e := range it.Elems {
			r, err := c.method(name, e)
			if err != nil {
				return nil, err
			}
			out = append(out, r...)
		}
		return out, nil
	}
	if name == "double" {
		var f float64
		switch it.Kind {
		case types.JSONNumber:
			var err error
			if f, err = strconv.ParseFloat(it.Num.String(), 64); err != nil || math.IsInf(f, 0) {
				return nil, jpFail(sqlerr.NonNumericSQLJSONItem, "numeric argument of jsonpath item method .double() is out of range for type double precision")
			}
		case types.JSONString:
			d, err := types.ParseText(it.Str, types.Float8)
			if err != nil {
				return nil, jpFail(sqlerr.NonNumericSQLJSONItem, "string argument of jsonpath item method .double() is not a valid representation of a double precision number")
			}
			f = d.Float()
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, jpFail(sqlerr.NonNumericSQLJSONItem, "string argument of jsonpath item method .double() is not a valid representation of a double precision number")
			}
		default:
			return nil, jpFail(sqlerr.NonNumericSQLJSONItem, "jsonpath item method .double() can only be applied to a string or numeric value")
		}
		var d apd.Decimal
		if _, _, err := d.SetString(strconv.FormatFloat(f, 'g', 15, 64)); err != nil {
			return nil, err
		}
		return []*types.JSONValue{types.JSONNumberValue(&d)}, nil
	}
	if it.Kind != types.JSONNumber {
		return nil, jpFail(sqlerr.NonNumericSQLJSONItem, "jsonpath item method .%s() can only be applied to a numeric value", name)
	}
	fn := map[string]string{"abs": "abs", "floor": "floor", "ceiling": "ceiling"}[name]
	e, err := Call(fn, []Expr{&Const{D: types.NewDecimal(it.Num), T: types.Numeric}})
	if err != nil {
		return nil, err
	}
	d, err := e.Eval(nil)
	if err != nil {
		return nil, &jpError{err: err}
	}
	return []*types.JSONValue{types.JSONNumberValue(d.Decimal())}, nil
}

// pred evaluates a predicate; errors make it unknown.
func (c *jpCtx) pred(n *jpNode, cur *types.JSONValue, last int64) jpBool {
	switch n.kind {
	case jpAnd:
		l := c.pred(n.l, cur, last)
		if l == jpFalse {
			return jpFalse
		}
		r := c.pred(n.r, cur, last)
		if r == jpTrue {
			return l
		}
		return r
	case jpOr:
		l := c.pred(n.l, cur, last)
		if l == jpTrue {
			return jpTrue
		}
		r := c.pred(n.r, cur, last)
		if r == jpFalse {
			return l
		}
		return r
	case jpNot:
		switch c.pred(n.l, cur, last) {
		case jpTrue:
			return jpFalse
		case jpFalse:
			return jpTrue
		}
		return jpUnknown
	case jpIsUnknown:
		if c.pred(n.l, cur, last) == jpUnknown {
			return jpTrue
		}
		return jpFalse
	case jpExists:
		items, err := c.seq(n.l, cur, last)
		if err != nil {
			if e, ok := err.(*jpError); ok && e.structural && !c.strict {
				return jpFalse
			}
			return c.unknown(err)
		}
		if len(items) > 0 {
			return jpTrue
		}
		return jpFalse
	case jpCompare, jpLikeRegex, jpStartsWith:
		ls, err := c.unwrapped(n.l, cur, last)
		if err != nil {
			return c.unknown(err)
		}
		var rs []*types.JSONValue
		if n.r != nil {
			if n.kind == jpCompare {
				rs, err = c.unwrapped(n.r, cur, last)
			} else {
				rs, err = c.seq(n.r, cur, last)
			}
			if err != nil {
				return c.unknown(err)
			}
		}
		found, errored := false, false
		for _, l := range ls {
			var r jpBool
			switch n.kind {
			case jpLikeRegex:
				r = jpUnknown
				if l.Kind == types.JSONString {
					r = jpFalse
					if n.re.MatchString(l.Str) {
						r = jpTrue
					}
				}
				found, errored = found || r == jpTrue, errored || r == jpUnknown
			case jpStartsWith:
				if len(rs) != 1 || rs[0].Kind != types.JSONString {
					return jpUnknown
				}
				r = jpUnknown
				if l.Kind == types.JSONString {
					r = jpFalse
					if strings.HasPrefix(l.Str, rs[0].Str) {
						r = jpTrue
					}
				}
				found, errored = found || r == jpTrue, errored || r == jpUnknown
			default:
				for _, rv := range rs {
					r := jpCompareItems(n.op, l, rv)
					found, errored = found || r == jpTrue, errored || r == jpUnknown
					if found && !c.strict || errored && c.strict {
						break
					}
				}
			}
			// As PostgreSQL: lax mode is true at the first true pair,
			// strict mode unknown at the first unknown one.
			if found && !c.strict {
				return jpTrue
			}
			if errored && c.strict {
				return jpUnknown
			}
		}
		switch {
		case found:
			return jpTrue
		case errored:
			return jpUnknown
		}
		return jpFalse
	}
	// A value where a predicate is wanted (cannot be parsed).
	return jpUnknown
}

// jpCompareItems compares two items as jsonpath does: nulls equal only
// nulls, scalars of different kinds and non-scalars are not comparable.
func jpCompareItems(op string, a, b *types.JSONValue) jpBool {
	if a.Kind != b.Kind {
		if a.Kind == types.JSONNull || b.Kind == types.JSONNull {
			if op == "!=" {
				return jpTrue
			}
			return jpFalse
		}
		return jpUnknown
	}
	var cmp int
	switch a.Kind {
	case types.JSONNull:
	case types.JSONBool:
		switch {
		case a.Bool == b.Bool:
		case a.Bool:
			cmp = 1
		default:
			cmp = -1
		}
	case types.JSONNumber:
		cmp = a.Num.Cmp(b.Num)
	case types.JSONString:
		cmp = strings.Compare(a.Str, b.Str)
	default:
		return jpUnknown
	}
	var ok bool
	switch op {
	case "==":
		ok = cmp == 0
	case "!=":
		ok = cmp != 0
	case "<":
		ok = cmp < 0
	case "<=":
		ok = cmp <= 0
	case ">":
		ok = cmp > 0
	case ">=":
		ok = cmp >= 0
	}
	if ok {
		return jpTrue
	}
	return jpFalse
}

// evalJSONPath runs path over target with vars (a jsonb object or nil).
// On an error, items are those found before it, and with silent the
// error is suppressed (ok false).
func evalJSONPath(target *types.JSONValue, path *parsedPath, vars *types.JSONValue, silent bool) (items []*types.JSONValue, ok bool, err error) {
	c := &jpCtx{root: target, vars: vars, strict: path.strict}
	items, err = c.seq(path.expr, nil, -2)
	if c.fatal != nil {
		return nil, false, c.fatal
	}
	if err != nil {
		if e, ok := err.(*jpError); ok && e.structural && !path.strict {
			return nil, true, nil
		}
		if silent {
			if _, ok := err.(*jpError); ok {
				return items, false, nil
			}
		}
		return items, false, jpSQLError(err)
	}
	return items, true, nil
}
