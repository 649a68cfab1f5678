package front

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"streamdb/sqlerr"
)

// tokKind is the lexical class of a token.
type tokKind uint8

const (
	tkEOF       tokKind = iota
	tkWord              // unquoted identifier or keyword; val is lower-cased
	tkIdent             // "quoted identifier"; val is the name without quotes
	tkString            // string constant; val is the decoded value
	tkBitString         // B'0101', X'ff' or N'...': emitted as written
	tkNumber            // numeric constant; val is its text
	tkParam             // $n parameter; n is the number
	tkOp                // operator or punctuation: ( ) , ; . :: + <= ...
)

// token is one lexical token. pos and end are byte offsets into the text the
// user wrote; tokens synthesised by a rewrite carry the offsets of the token
// that caused them, so errors still point into the original text.
type token struct {
	kind  tokKind
	val   string
	pos   int
	end   int
	space bool // whitespace or a comment came before it
	n     int  // parameter number for tkParam
	// keyword marks a word a statement rewrite found in a keyword's place
	// (UPDATE's SET after a moved FROM list): quotePass leaves it a
	// keyword whatever comes before it.
	keyword bool
}

// multiOps are the operators of more than one character, longest first.
var multiOps = []string{
	"!~~*", "!~~", "->>", "#>>", "!~*", "~~*", "#>", "#-", "?|", "?&",
	"::", "<=", ">=", "<>", "!=", "||", "->", "!~", "~*", "~~",
	"<<", ">>", "@>", "<@", "&&", "=>", ":=", "@?", "@@",
}

// lexer turns SQL text into tokens.
type lexer struct {
	src string
	i   int
	// tolerant makes unterminated strings, identifiers and comments end the
	// input instead of failing; Split uses it.
	tolerant bool
	// dangling is where an unterminated comment began in tolerant mode, or -1.
	dangling int
}

// lex tokenizes src. Errors are *sqlerr.Error with a Position.
func lex(src string) ([]token, error) {
	l := &lexer{src: src, dangling: -1}
	return l.all()
}

func (l *lexer) all() ([]token, error) {
	var toks []token
	for {
		space, err := l.skipSpace()
		if err != nil {
			return toks, err
		}
		if l.i >= len(l.src) {
			return toks, nil
		}
		t, err := l.next()
		if err != nil {
			return toks, err
		}
		t.space = space
		toks = append(toks, t)
	}
}

// skipSpace skips whitespace and comments and reports whether it skipped any.
func (l *lexer) skipSpace() (bool, error) {
	start := l.i
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.i++
		case strings.HasPrefix(l.src[l.i:], "--"):
			if j := strings.IndexByte(l.src[l.i:], '\n'); j >= 0 {
				l.i += j + 1
			} else {
				l.i = len(l.src)
			}
		case strings.HasPrefix(l.src[l.i:], "/*"):
			if err := l.blockComment(); err != nil {
				return true, err
			}
		default:
			return l.i > start, nil
		}
	}
	return l.i > start, nil
}

// blockComment skips a /* */ comment; they nest, as in PostgreSQL.
func (l *lexer) blockComment() error {
	start := l.i
	depth := 0
	for l.i < len(l.src) {
		switch {
		case strings.HasPrefix(l.src[l.i:], "/*"):
			depth++
			l.i += 2
		case strings.HasPrefix(l.src[l.i:], "*/"):
			depth--
			l.i += 2
			if depth == 0 {
				return nil
			}
		default:
			l.i++
		}
	}
	if l.tolerant {
		l.dangling = start
	}
	return l.unterminated(start, "unterminated /* comment")
}

func (l *lexer) unterminated(start int, msg string) error {
	if l.tolerant {
		l.i = len(l.src)
		return nil
	}
	return sqlerr.New(sqlerr.SyntaxError, "%s at or near \"%s\"", msg, l.src[start:]).
		WithPosition(charPos(l.src, start))
}

func (l *lexer) next() (token, error) {
	start := l.i
	c := l.src[l.i]
	switch {
	case c == '\'':
		return l.quoted(start, false)
	case (c == 'e' || c == 'E') && l.peekByte(1) == '\'':
		l.i++
		return l.quoted(start, true)
	case (c == 'b' || c == 'B' || c == 'x' || c == 'X' || c == 'n' || c == 'N') && l.peekByte(1) == '\'':
		l.i++
		t, err := l.quoted(start, false)
		if c == 'n' || c == 'N' {
			return t, err // national strings are plain strings
		}
		t.kind = tkBitString
		t.val = l.src[start:l.i]
		return t, err
	case c == '"':
		return l.quotedIdent(start)
	case c == '$':
		return l.dollar(start)
	case isDigit(c) || (c == '.' && isDigit(l.peekByte(1))):
		return l.number(start), nil
	case isIdentStart(c):
		for l.i < len(l.src) && isIdentCont(l.src[l.i]) {
			l.i++
		}
		return token{kind: tkWord, val: strings.ToLower(l.src[start:l.i]), pos: start, end: l.i}, nil
	}
	for _, op := range multiOps {
		if strings.HasPrefix(l.src[l.i:], op) {
			l.i += len(op)
			return token{kind: tkOp, val: op, pos: start, end: l.i}, nil
		}
	}
	_, size := utf8.DecodeRuneInString(l.src[l.i:])
	l.i += size
	return token{kind: tkOp, val: l.src[start:l.i], pos: start, end: l.i}, nil
}

func (l *lexer) peekByte(k int) byte {
	if l.i+k < len(l.src) {
		return l.src[l.i+k]
	}
	return 0
}

// quoted reads a '...' string with ” escapes; escapes enables E'...'
// backslash escapes. l.i is at the opening quote.
func (l *lexer) quoted(start int, escapes bool) (token, error) {
	l.i++ // opening quote
	var b strings.Builder
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == '\'' && l.peekByte(1) == '\'':
			b.WriteByte('\'')
			l.i += 2
		case c == '\'':
			l.i++
			return token{kind: tkString, val: b.String(), pos: start, end: l.i}, nil
		case c == '\\' && escapes:
			if err := l.backslash(&b); err != nil {
				return token{kind: tkString, val: b.String(), pos: start, end: l.i}, err
			}
		default:
			b.WriteByte(c)
			l.i++
		}
	}
	err := l.unterminated(start, "unterminated quoted string")
	return token{kind: tkString, val: b.String(), pos: start, end: l.i}, err
}

// backslash decodes one E'...' escape sequence at l.i.
func (l *lexer) backslash(b *strings.Builder) error {
	escStart := l.i
	l.i++ // backslash
	if l.i >= len(l.src) {
		return nil
	}
	c := l.src[l.i]
	l.i++
	simple := map[byte]byte{'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
	if r, ok := simple[c]; ok {
		b.WriteByte(r)
		return nil
	}
	digits := func(max int, ok func(byte) bool) string {
		j := l.i
		for j < len(l.src) && j-l.i < max && ok(l.src[j]) {
			j++
		}
		s := l.src[l.i:j]
		l.i = j
		return s
	}
	switch {
	case c >= '0' && c <= '7':
		l.i--
		s := digits(3, func(d byte) bool { return d >= '0' && d <= '7' })
		v, _ := strconv.ParseUint(s, 8, 8)
		b.WriteByte(byte(v))
	case c == 'x':
		if s := digits(2, isHex); s != "" {
			v, _ := strconv.ParseUint(s, 16, 8)
			b.WriteByte(byte(v))
			return nil
		}
		b.WriteByte(c)
	case c == 'u' || c == 'U':
		n := 4
		if c == 'U' {
			n = 8
		}
		if s := digits(n, isHex); len(s) == n {
			v, _ := strconv.ParseUint(s, 16, 32)
			return l.unicodeEscape(b, v, escStart)
		}
		b.WriteByte(c)
	default:
		b.WriteByte(c)
	}
	return nil
}

// quotedIdent reads a "..." identifier with "" escapes.
func (l *lexer) quotedIdent(start int) (token, error) {
	l.i++
	var b strings.Builder
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == '"' && l.peekByte(1) == '"':
			b.WriteByte('"')
			l.i += 2
		case c == '"':
			l.i++
			if b.Len() == 0 && !l.tolerant {
				return token{}, sqlerr.New(sqlerr.SyntaxError, "zero-length delimited identifier at or near \"%s\"", `""`).
					WithPosition(charPos(l.src, start))
			}
			return token{kind: tkIdent, val: b.String(), pos: start, end: l.i}, nil
		default:
			b.WriteByte(c)
			l.i++
		}
	}
	err := l.unterminated(start, "unterminated quoted identifier")
	return token{kind: tkIdent, val: b.String(), pos: start, end: l.i}, err
}

// dollar reads a $n parameter or a $tag$...$tag$ string.
func (l *lexer) dollar(start int) (token, error) {
	j := l.i + 1
	if j < len(l.src) && isDigit(l.src[j]) {
		for j < len(l.src) && isDigit(l.src[j]) {
			j++
		}
		n, err := strconv.Atoi(l.src[l.i+1 : j])
		l.i = j
		if err != nil || n > 65535 {
			n = 1 << 30
		}
		return token{kind: tkParam, val: l.src[start:j], pos: start, end: j, n: n}, nil
	}
	for j < len(l.src) && isIdentCont(l.src[j]) && l.src[j] != '$' {
		j++
	}
	if j >= len(l.src) || l.src[j] != '$' {
		l.i++
		return token{kind: tkOp, val: "$", pos: start, end: l.i}, nil
	}
	tag := l.src[l.i : j+1]
	body := j + 1
	k := strings.Index(l.src[body:], tag)
	if k < 0 {
		l.i = body
		err := l.unterminated(start, "unterminated dollar-quoted string")
		return token{kind: tkString, val: l.src[body:], pos: start, end: len(l.src)}, err
	}
	l.i = body + k + len(tag)
	return token{kind: tkString, val: l.src[body : body+k], pos: start, end: l.i}, nil
}

// number reads an integer, decimal or exponent constant.
func (l *lexer) number(start int) token {
	if strings.HasPrefix(l.src[l.i:], "0x") || strings.HasPrefix(l.src[l.i:], "0X") {
		l.i += 2
		for l.i < len(l.src) && isHex(l.src[l.i]) {
			l.i++
		}
		return token{kind: tkNumber, val: l.src[start:l.i], pos: start, end: l.i}
	}
	for l.i < len(l.src) && (isDigit(l.src[l.i]) || l.src[l.i] == '_') {
		l.i++
	}
	if l.peekByte(0) == '.' && l.peekByte(1) != '.' {
		l.i++
		for l.i < len(l.src) && isDigit(l.src[l.i]) {
			l.i++
		}
	}
	if c := l.peekByte(0); c == 'e' || c == 'E' {
		j := l.i + 1
		if j < len(l.src) && (l.src[j] == '+' || l.src[j] == '-') {
			j++
		}
		if j < len(l.src) && isDigit(l.src[j]) {
			for j < len(l.src) && isDigit(l.src[j]) {
				j++
			}
			l.i = j
		}
	}
	return token{kind: tkNumber, val: strings.ReplaceAll(l.src[start:l.i], "_", ""), pos: start, end: l.i}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentCont(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

// charPos converts a byte offset in src to a 1-based character position, the
// unit of PostgreSQL's error Position.
func charPos(src string, off int) int {
	if off > len(src) {
		off = len(src)
	}
	return utf8.RuneCountInString(src[:off]) + 1
}
