package types

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
)

// json and jsonb. A json datum (KindJSON) holds its input text as given,
// checked to be JSON; a jsonb datum (KindJSONB) holds the canonical text
// of its value as PostgreSQL's jsonb_out prints it: object keys in jsonb's
// storage order (shorter keys first, then bytewise), the last of duplicate
// keys kept, numbers as numeric prints them, ", " and ": " between items.
// Two jsonb values PostgreSQL calls equal have the same canonical text but
// for numbers of one value written with different scales (1.0 and 1).
// Operators parse the text into a JSONValue.

// JSONKind is the kind of a JSON value. Its order is jsonb's order of
// kinds: null < string < number < boolean < array < object.
type JSONKind uint8

const (
	JSONNull JSONKind = iota
	JSONString
	JSONNumber
	JSONBool
	JSONArray
	JSONObject
)

// String is the name jsonb_typeof gives the kind.
func (k JSONKind) String() string {
	return [...]string{"null", "string", "number", "boolean", "array", "object"}[k]
}

// JSONValue is a parsed JSON value.
type JSONValue struct {
	Kind JSONKind
	// Str is a string's value; a number's text.
	Str  string
	Num  *apd.Decimal // a number's value
	Bool bool
	// Elems are an array's elements.
	Elems []*JSONValue
	// Keys and Vals are an object's members, in jsonb order for a value
	// from ParseJSONB (NormalizeJSON).
	Keys []string
	Vals []*JSONValue
	// Raw is the value's text as written, in a value parsed from json
	// (which keeps its text); empty otherwise.
	Raw string
}

// MaxJSONDepth bounds the nesting of JSON input, as PostgreSQL's stack
// depth limit does.
const MaxJSONDepth = 6000

// NewJSONB returns the jsonb datum of v, whose objects are in jsonb order.
func NewJSONB(v *JSONValue) Datum {
	var sb strings.Builder
	WriteJSON(&sb, v, false)
	return Datum{K: KindJSONB, S: sb.String()}
}

// NewJSONText returns a json datum of text s, which must be valid JSON.
func NewJSONText(s string) Datum { return Datum{K: KindJSON, S: s} }

// JSONStringValue, JSONBoolValue, JSONNullValue and JSONNumberValue build
// scalar values.
func JSONStringValue(s string) *JSONValue { return &JSONValue{Kind: JSONString, Str: s} }
func JSONBoolValue(b bool) *JSONValue     { return &JSONValue{Kind: JSONBool, Bool: b} }
func JSONNullValue() *JSONValue           { return &JSONValue{Kind: JSONNull} }

// JSONNumberValue is the number d (finite).
func JSONNumberValue(d *apd.Decimal) *JSONValue {
	return &JSONValue{Kind: JSONNumber, Num: d, Str: FormatText(NewDecimal(d), Numeric)}
}

// JSONOf parses the text of a json or jsonb datum. A jsonb datum's text
// is canonical, so its value's objects are in jsonb order.
func JSONOf(d Datum) (*JSONValue, error) {
	if d.K == KindJSONB {
		return parseJSON(d.S, false)
	}
	return parseJSON(d.S, true)
}

// ParseJSON checks json input and returns the json datum of s as given.
func ParseJSON(s string) (Datum, error) {
	if _, err := parseJSON(s, true); err != nil {
		return Null, err
	}
	return NewJSONText(s), nil
}

// ParseJSONB reads jsonb input: the canonical form of the JSON text s.
func ParseJSONB(s string) (Datum, error) {
	c := canonPool.Get().(*JSONBCanon)
	text, ok := c.Canonical(s)
	if cap(c.buf) <= 1<<20 { // a huge document's buffer is not kept
		canonPool.Put(c)
	}
	if ok {
		return Datum{K: KindJSONB, S: text}, nil
	}
	return ParseJSONBSlow(s)
}

// canonPool keeps ParseJSONB's scanners.
var canonPool = sync.Pool{New: func() any { return new(JSONBCanon) }}

// ParseJSONBSlow is ParseJSONB through the parser alone (what JSONBCanon
// must agree with).
func ParseJSONBSlow(s string) (Datum, error) {
	v, err := parseJSON(s, false)
	if err != nil {
		return Null, err
	}
	return NewJSONB(NormalizeJSON(v)), nil
}

// JSONBOfJSON is the jsonb value of a json value's text.
func JSONBOfJSON(s string) (*JSONValue, error) {
	v, err := parseJSON(s, false)
	if err != nil {
		return nil, err
	}
	return NormalizeJSON(v), nil
}

// NormalizeJSON puts v's objects in jsonb order, keeping the last value
// of a duplicated key, in place, and returns v.
func NormalizeJSON(v *JSONValue) *JSONValue {
	switch v.Kind {
	case JSONArray:
		for _, e := range v.Elems {
			NormalizeJSON(e)
		}
	case JSONObject:
		for _, e := range v.Vals {
			NormalizeJSON(e)
		}
		sortJSONObject(v)
	}
	return v
}

// JSONKeyLess is jsonb's storage order of object keys: shorter first, then
// bytewise.
func JSONKeyLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// sortJSONObject sorts v's members stably by key and drops all but the
// last of equal keys.
func sortJSONObject(v *JSONValue) {
	n := len(v.Keys)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	// Insertion sort on small objects, merge sort otherwise: both stable.
	stableSortIdx(idx, func(i, j int) bool { return JSONKeyLess(v.Keys[i], v.Keys[j]) })
	keys := make([]string, 0, n)
	vals := make([]*JSONValue, 0, n)
	for _, i := range idx {
		if len(keys) > 0 && keys[len(keys)-1] == v.Keys[i] {
			vals[len(vals)-1] = v.Vals[i] // the later duplicate wins
			continue
		}
		keys = append(keys, v.Keys[i])
		vals = append(vals, v.Vals[i])
	}
	v.Keys, v.Vals = keys, vals
}

func stableSortIdx(idx []int, less func(i, j int) bool) {
	if len(idx) < 12 {
		for i := 1; i < len(idx); i++ {
			for j := i; j > 0 && less(idx[j], idx[j-1]); j-- {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			}
		}
		return
	}
	mid := len(idx) / 2
	a := append([]int(nil), idx[:mid]...)
	b := append([]int(nil), idx[mid:]...)
	stableSortIdx(a, less)
	stableSortIdx(b, less)
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if less(b[j], a[i]) {
			idx[k] = b[j]
			j++
		} else {
			idx[k] = a[i]
			i++
		}
		k++
	}
	k += copy(idx[k:], a[i:])
	copy(idx[k:], b[j:])
}

// Lookup returns the value of key in object v (the last one of duplicates
// in a json value), or nil.
func (v *JSONValue) Lookup(key string) *JSONValue {
	if v.Kind != JSONObject {
		return nil
	}
	for i := len(v.Keys) - 1; i >= 0; i-- {
		if v.Keys[i] == key {
			return v.Vals[i]
		}
	}
	return nil
}

// WriteJSON writes v as jsonb_out prints it, or with pretty's layout
// (jsonb_pretty: four spaces per level).
func WriteJSON(sb *strings.Builder, v *JSONValue, pretty bool) {
	writeJSON(sb, v, pretty, 0)
}

func writeJSON(sb *strings.Builder, v *JSONValue, pretty bool, level int) {
	indent := func(l int) {
		sb.WriteByte('\n')
		for i := 0; i < l; i++ {
			sb.WriteString("    ")
		}
	}
	switch v.Kind {
	case JSONNull:
		sb.WriteString("null")
	case JSONBool:
		if v.Bool {
			sb.WriteString("true")
		} else {
			sb.WriteString("false")
		}
	case JSONNumber:
		sb.WriteString(v.Str)
	case JSONString:
		WriteJSONString(sb, v.Str)
	case JSONArray:
		sb.WriteByte('[')
		for i, e := range v.Elems {
			if i > 0 {
				sb.WriteString(",")
				if !pretty {
					sb.WriteByte(' ')
				}
			}
			if pretty {
				indent(level + 1)
			}
			writeJSON(sb, e, pretty, level+1)
		}
		if pretty {
			indent(level)
		}
		sb.WriteByte(']')
	case JSONObject:
		sb.WriteByte('{')
		for i, k := range v.Keys {
			if i > 0 {
				sb.WriteString(",")
				if !pretty {
					sb.WriteByte(' ')
				}
			}
			if pretty {
				indent(level + 1)
			}
			WriteJSONString(sb, k)
			sb.WriteString(": ")
			writeJSON(sb, v.Vals[i], pretty, level+1)
		}
		if pretty {
			indent(level)
		}
		sb.WriteByte('}')
	}
}

// FormatJSON is v's jsonb text.
func FormatJSON(v *JSONValue) string {
	var sb strings.Builder
	WriteJSON(&sb, v, false)
	return sb.String()
}

// WriteJSONString writes s as a JSON string literal, escaped as
// PostgreSQL's escape_json does.
func WriteJSONString(sb *strings.Builder, s string) {
	sb.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		default:
			if c < 0x20 {
				sb.WriteString(`\u00`)
				sb.WriteByte("0123456789abcdef"[c>>4])
				sb.WriteByte("0123456789abcdef"[c&15])
				continue
			}
			sb.WriteByte(c)
		}
	}
	sb.WriteByte('"')
}

// CompareJSONB orders two jsonb values as PostgreSQL's jsonb btree
// operators do (compareJsonbContainers). At the top level a scalar is a
// one-element "raw scalar" array there: it sorts after the empty array
// and before every other array. Within containers a kind orders before
// another by JSONKind; arrays by length, then elements; objects by
// member count, then key and value pairs in storage order. Strings
// compare bytewise (the C collation).
func CompareJSONB(a, b *JSONValue) int {
	ar, br := a.Kind < JSONArray, b.Kind < JSONArray
	if ar != br && a.Kind != JSONObject && b.Kind != JSONObject {
		// A raw scalar against a real array: the scalar is an array of
		// one element that sorts before real arrays of equal length.
		an, bn := 1, 1
		if !ar {
			an = len(a.Elems)
		}
		if !br {
			bn = len(b.Elems)
		}
		if an != bn {
			return cmpInt(an, bn)
		}
		if ar {
			return -1
		}
		return 1
	}
	return compareJSONValues(a, b)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareJSONValues(a, b *JSONValue) int {
	if a.Kind != b.Kind {
		return cmpInt(int(a.Kind), int(b.Kind))
	}
	switch a.Kind {
	case JSONNull:
		return 0
	case JSONString:
		return strings.Compare(a.Str, b.Str)
	case JSONNumber:
		return a.Num.Cmp(b.Num)
	case JSONBool:
		return cmpInt(b2i(a.Bool), b2i(b.Bool))
	case JSONArray:
		if c := cmpInt(len(a.Elems), len(b.Elems)); c != 0 {
			return c
		}
		for i := range a.Elems {
			if c := compareJSONValues(a.Elems[i], b.Elems[i]); c != 0 {
				return c
			}
		}
	case JSONObject:
		if c := cmpInt(len(a.Keys), len(b.Keys)); c != 0 {
			return c
		}
		for i := range a.Keys {
			if c := strings.Compare(a.Keys[i], b.Keys[i]); c != 0 {
				return c
			}
			if c := compareJSONValues(a.Vals[i], b.Vals[i]); c != 0 {
				return c
			}
		}
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// jsonSyntaxError is json input's error: 22P02 with what went wrong.
func jsonSyntaxError(typ string, detail string) error {
	e := sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s", typ)
	e.Detail = detail
	return e
}

// jsonParser reads JSON text as PostgreSQL's json lexer does: RFC 8259
// grammar, whitespace of space, tab, CR and LF only.
type jsonParser struct {
	s     string
	i     int
	depth int
	// plain: checking json input, where \u0000 is allowed (json keeps
	// its text) but jsonb refuses it.
	plain bool
}

func parseJSON(s string, plain bool) (*JSONValue, error) {
	p := &jsonParser{s: s, plain: plain}
	p.ws()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i < len(p.s) {
		return nil, p.tokenError()
	}
	return v, nil
}

// typ names the type in syntax errors: PostgreSQL says json for jsonb
// input too.
func (p *jsonParser) typ() string { return "json" }

func (p *jsonParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// tokenError reports the token at p.i as PostgreSQL does.
func (p *jsonParser) tokenError() error {
	if p.i >= len(p.s) {
		return jsonSyntaxError(p.typ(), "The input string ended unexpectedly.")
	}
	j := p.i
	c := p.s[j]
	if isJSONWordByte(c) {
		for j < len(p.s) && isJSONWordByte(p.s[j]) {
			j++
		}
	} else {
		_, n := utf8.DecodeRuneInString(p.s[j:])
		j += n
	}
	return jsonSyntaxError(p.typ(), "Token \""+p.s[p.i:j]+"\" is invalid.")
}

func isJSONWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+' || c == '.' || c >= 0x80
}

func (p *jsonParser) value() (*JSONValue, error) {
	start := p.i
	v, err := p.value1()
	if err == nil && p.plain {
		v.Raw = p.s[start:p.i]
	}
	return v, err
}

func (p *jsonParser) value1() (*JSONValue, error) {
	if p.i >= len(p.s) {
		return nil, p.tokenError()
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &JSONValue{Kind: JSONString, Str: s}, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		for _, w := range [...]string{"true", "false", "null"} {
			if strings.HasPrefix(p.s[p.i:], w) && (p.i+len(w) == len(p.s) || !isJSONWordByte(p.s[p.i+len(w)])) {
				p.i += len(w)
				switch w {
				case "true":
					return &JSONValue{Kind: JSONBool, Bool: true}, nil
				case "false":
					return &JSONValue{Kind: JSONBool}, nil
				}
				return &JSONValue{Kind: JSONNull}, nil
			}
		}
		return nil, p.tokenError()
	}
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > MaxJSONDepth {
		return sqlerr.New(sqlerr.StatementTooComplex, "stack depth limit exceeded").
			WithHint("Nest JSON values less deeply.")
	}
	return nil
}

func (p *jsonParser) object() (*JSONValue, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++ // {
	v := &JSONValue{Kind: JSONObject}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		p.depth--
		return v, nil
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			if p.i < len(p.s) {
				return nil, jsonSyntaxError(p.typ(), "Expected string or \"}\", but found \""+p.tokenText()+"\".")
			}
			return nil, p.tokenError()
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			if p.i < len(p.s) {
				return nil, jsonSyntaxError(p.typ(), "Expected \":\", but found \""+p.tokenText()+"\".")
			}
			return nil, p.tokenError()
		}
		p.i++
		p.ws()
		e, err := p.value()
		if err != nil {
			return nil, err
		}
		v.Keys = append(v.Keys, k)
		v.Vals = append(v.Vals, e)
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			p.depth--
			return v, nil
		}
		if p.i < len(p.s) {
			return nil, jsonSyntaxError(p.typ(), "Expected \",\" or \"}\", but found \""+p.tokenText()+"\".")
		}
		return nil, p.tokenError()
	}
}

// tokenText is the token at p.i, for messages.
func (p *jsonParser) tokenText() string {
	j := p.i
	if j < len(p.s) && isJSONWordByte(p.s[j]) {
		for j < len(p.s) && isJSONWordByte(p.s[j]) {
			j++
		}
	} else if j < len(p.s) {
		if p.s[j] == '"' {
			// a whole string token
			k := j + 1
			for k < len(p.s) && p.s[k] != '"' {
				if p.s[k] == '\\' {
					k++
				}
				k++
			}
			return p.s[j:min(k+1, len(p.s))]
		}
		_, n := utf8.DecodeRuneInString(p.s[j:])
		j += n
	}
	return p.s[p.i:j]
}

func (p *jsonParser) array() (*JSONValue, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++ // [
	v := &JSONValue{Kind: JSONArray}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		p.depth--
		return v, nil
	}
	for {
		p.ws()
		e, err := p.value()
		if err != nil {
			return nil, err
		}
		v.Elems = append(v.Elems, e)
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			p.depth--
			return v, nil
		}
		if p.i < len(p.s) {
			return nil, jsonSyntaxError(p.typ(), "Expected \",\" or \"]\", but found \""+p.tokenText()+"\".")
		}
		return nil, p.tokenError()
	}
}

func (p *jsonParser) number() (*JSONValue, error) {
	start := p.i
	j := p.i
	if j < len(p.s) && p.s[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		return j - k
	}
	bad := func() (*JSONValue, error) {
		for j < len(p.s) && isJSONWordByte(p.s[j]) {
			j++
		}
		return nil, jsonSyntaxError(p.typ(), "Token \""+p.s[start:j]+"\" is invalid.")
	}
	if j < len(p.s) && p.s[j] == '0' {
		j++
	} else if digits() == 0 {
		return bad()
	}
	if j < len(p.s) && p.s[j] == '.' {
		j++
		if digits() == 0 {
			return bad()
		}
	}
	if j < len(p.s) && (p.s[j] == 'e' || p.s[j] == 'E') {
		j++
		if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
			j++
		}
		if digits() == 0 {
			return bad()
		}
	}
	if j < len(p.s) && isJSONWordByte(p.s[j]) {
		return bad()
	}
	p.i = j
	text := p.s[start:j]
	d, err := ParseNumeric(text)
	if err != nil {
		if p.plain {
			// json keeps numbers as text; numeric's limits do not apply.
			return &JSONValue{Kind: JSONNumber, Str: text}, nil
		}
		return nil, err
	}
	return &JSONValue{Kind: JSONNumber, Num: d.D, Str: FormatText(d, Numeric)}, nil
}

// str reads a string literal at p.i (the opening quote).
func (p *jsonParser) str() (string, error) {
	p.i++
	start := p.i
	// Fast path: no escapes.
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '"' {
			s := p.s[start:p.i]
			p.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.i++
	}
	var sb strings.Builder
	sb.WriteString(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return sb.String(), nil
		case c < 0x20:
			return "", jsonSyntaxError(p.typ(), "Character with value 0x"+hex2(c)+" must be escaped.")
		case c != '\\':
			sb.WriteByte(c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.s) {
			break
		}
		e := p.s[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			sb.WriteByte(e)
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
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			switch {
			case r == 0 && p.plain:
				// json keeps its text, so input may hold \u0000; only
				// taking the string out as text refuses it.
				sb.WriteString("\\u0000")
			case r == 0:
				e := sqlerr.New(sqlerr.UntranslatableCharacter, "unsupported Unicode escape sequence")
				e.Detail = "\\u0000 cannot be converted to text."
				return "", e
			case utf16.IsSurrogate(rune(r)) && r < 0xdc00:
				if !strings.HasPrefix(p.s[p.i:], `\u`) {
					return "", jsonSyntaxError(p.typ(), "Unicode high surrogate must not follow a high surrogate.")
				}
				p.i += 2
				lo, err := p.hex4()
				if err != nil {
					return "", err
				}
				if lo < 0xdc00 || lo > 0xdfff {
					return "", jsonSyntaxError(p.typ(), "Unicode low surrogate must follow a high surrogate.")
				}
				sb.WriteRune(utf16.DecodeRune(rune(r), rune(lo)))
			case utf16.IsSurrogate(rune(r)):
				return "", jsonSyntaxError(p.typ(), "Unicode low surrogate must follow a high surrogate.")
			default:
				sb.WriteRune(rune(r))
			}
		default:
			return "", jsonSyntaxError(p.typ(), "Escape sequence \"\\"+string(e)+"\" is invalid.")
		}
	}
	return "", jsonSyntaxError(p.typ(), "The input string ended unexpectedly.")
}

func (p *jsonParser) hex4() (int, error) {
	if p.i+4 > len(p.s) {
		return 0, jsonSyntaxError(p.typ(), "\"\\u\" must be followed by four hexadecimal digits.")
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, jsonSyntaxError(p.typ(), "\"\\u\" must be followed by four hexadecimal digits.")
	}
	p.i += 4
	return int(v), nil
}

func hex2(c byte) string {
	return string([]byte{"0123456789abcdef"[c>>4], "0123456789abcdef"[c&15]})
}

// CompareJSONBText orders the texts of two jsonb datums (CompareJSONB);
// text that does not parse sorts by its bytes.
func CompareJSONBText(a, b string) int {
	if a == b {
		return 0
	}
	av, aerr := parseJSON(a, false)
	bv, berr := parseJSON(b, false)
	if aerr != nil || berr != nil {
		return strings.Compare(a, b)
	}
	return CompareJSONB(av, bv)
}

func init() {
	arrayOIDs[JSON] = 199
	arrayOIDs[JSONB] = 3807
}
