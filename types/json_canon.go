package types

import "unsafe"

// JSONBCanon writes the canonical jsonb text of JSON input (what
// ParseJSONB's datum holds) in one pass over the input's bytes, without
// building a JSONValue: object members are written into a scratch buffer
// as they are read, then copied out in jsonb's key order, the last of
// duplicate keys kept. It covers the input that needs no decoding: strings
// without escapes (their bytes are their jsonb text), every JSON number
// (integers as they are but -0, others through numeric as the parser
// does). Anything else (an escape, invalid JSON, nesting past
// MaxJSONDepth, a number numeric refuses) makes it give up, and the caller
// parses: errors are the parser's alone. A JSONBCanon keeps its buffers
// between calls; it serves one goroutine.
type JSONBCanon struct {
	s     string
	i     int
	depth int
	buf   []byte
	mem   []canonMember
	order []int
}

// canonMember is one object member: its key in s and its value's
// canonical text in buf.
type canonMember struct {
	k0, k1 int
	v0, v1 int
}

// Canonical returns the jsonb text of the JSON text s; ok is false where
// the one-pass scan does not apply (see JSONBCanon), never for a wrong
// answer.
func (c *JSONBCanon) Canonical(s string) (text string, ok bool) {
	c.s, c.i, c.depth = s, 0, 0
	c.buf, c.mem = c.buf[:0], c.mem[:0]
	c.ws()
	if !c.value() {
		return "", false
	}
	c.ws()
	if c.i != len(c.s) {
		return "", false
	}
	return string(c.buf), true
}

// CanonicalBytes is Canonical of the text b, without copying b first.
func (c *JSONBCanon) CanonicalBytes(b []byte) (text string, ok bool) {
	if len(b) == 0 {
		return c.Canonical("")
	}
	// c.s aliases b only during the call: the result is a copy of c.buf.
	text, ok = c.Canonical(unsafe.String(&b[0], len(b)))
	c.s = ""
	return text, ok
}

func (c *JSONBCanon) ws() {
	for c.i < len(c.s) {
		switch c.s[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *JSONBCanon) value() bool {
	if c.i >= len(c.s) {
		return false
	}
	switch b := c.s[c.i]; {
	case b == '{':
		return c.object()
	case b == '[':
		return c.array()
	case b == '"':
		start := c.i
		if !c.str() {
			return false
		}
		c.buf = append(c.buf, c.s[start:c.i]...)
		return true
	case b == '-' || b >= '0' && b <= '9':
		return c.number()
	}
	for _, w := range [...]string{"true", "false", "null"} {
		if len(c.s)-c.i >= len(w) && c.s[c.i:c.i+len(w)] == w && (c.i+len(w) == len(c.s) || !isJSONWordByte(c.s[c.i+len(w)])) {
			c.buf = append(c.buf, w...)
			c.i += len(w)
			return true
		}
	}
	return false
}

// str steps over the string at c.i, which must hold no escape and no
// control character (those need decoding); its bytes are then its jsonb
// text, as escape_json changes none of them.
func (c *JSONBCanon) str() bool {
	for j := c.i + 1; j < len(c.s); j++ {
		switch b := c.s[j]; {
		case b == '"':
			c.i = j + 1
			return true
		case b == '\\' || b < 0x20:
			return false
		}
	}
	return false
}

func (c *JSONBCanon) number() bool {
	start, j := c.i, c.i
	neg := j < len(c.s) && c.s[j] == '-'
	if neg {
		j++
	}
	digits := func() int {
		k := j
		for j < len(c.s) && c.s[j] >= '0' && c.s[j] <= '9' {
			j++
		}
		return j - k
	}
	plain := true
	if j < len(c.s) && c.s[j] == '0' {
		j++
		plain = !neg // -0 is numeric's 0
	} else if n := digits(); n == 0 || n > 1000 {
		return false // not a number, or numeric decides what fits
	}
	if j < len(c.s) && c.s[j] == '.' {
		j++
		plain = false
		if digits() == 0 {
			return false
		}
	}
	if j < len(c.s) && (c.s[j] == 'e' || c.s[j] == 'E') {
		j++
		plain = false
		if j < len(c.s) && (c.s[j] == '+' || c.s[j] == '-') {
			j++
		}
		if digits() == 0 {
			return false
		}
	}
	if j < len(c.s) && isJSONWordByte(c.s[j]) {
		return false
	}
	c.i = j
	text := c.s[start:j]
	if plain {
		c.buf = append(c.buf, text...)
		return true
	}
	d, err := ParseNumeric(text)
	if err != nil {
		return false
	}
	c.buf = append(c.buf, FormatText(d, Numeric)...)
	return true
}

func (c *JSONBCanon) enter() bool {
	c.depth++
	return c.depth <= MaxJSONDepth
}

func (c *JSONBCanon) array() bool {
	if !c.enter() {
		return false
	}
	c.i++ // [
	c.buf = append(c.buf, '[')
	c.ws()
	if c.i < len(c.s) && c.s[c.i] == ']' {
		c.i++
		c.depth--
		c.buf = append(c.buf, ']')
		return true
	}
	for n := 0; ; n++ {
		if n > 0 {
			c.buf = append(c.buf, ',', ' ')
		}
		c.ws()
		if !c.value() {
			return false
		}
		c.ws()
		if c.i >= len(c.s) {
			return false
		}
		switch c.s[c.i] {
		case ',':
			c.i++
		case ']':
			c.i++
			c.depth--
			c.buf = append(c.buf, ']')
			return true
		default:
			return false
		}
	}
}

func (c *JSONBCanon) object() bool {
	if !c.enter() {
		return false
	}
	c.i++ // {
	mark := len(c.buf)
	base := len(c.mem)
	c.ws()
	if c.i < len(c.s) && c.s[c.i] == '}' {
		c.i++
		c.depth--
		c.buf = append(c.buf, '{', '}')
		return true
	}
	for {
		c.ws()
		if c.i >= len(c.s) || c.s[c.i] != '"' {
			return false
		}
		k0 := c.i + 1
		if !c.str() {
			return false
		}
		k1 := c.i - 1
		c.ws()
		if c.i >= len(c.s) || c.s[c.i] != ':' {
			return false
		}
		c.i++
		c.ws()
		v0 := len(c.buf)
		if !c.value() {
			return false
		}
		c.mem = append(c.mem, canonMember{k0: k0, k1: k1, v0: v0, v1: len(c.buf)})
		c.ws()
		if c.i >= len(c.s) {
			return false
		}
		if c.s[c.i] == ',' {
			c.i++
			continue
		}
		if c.s[c.i] != '}' {
			return false
		}
		c.i++
		c.depth--
		break
	}
	c.writeObject(mark, base)
	return true
}

// writeObject replaces the values written since mark, those of the members
// c.mem[base:], with the object's canonical text, and drops the members.
func (c *JSONBCanon) writeObject(mark, base int) {
	mem := c.mem[base:]
	key := func(i int) string { return c.s[mem[i].k0:mem[i].k1] }
	c.order = c.order[:0]
	for i := range mem {
		c.order = append(c.order, i)
	}
	stableSortIdx(c.order, func(a, b int) bool { return JSONKeyLess(key(a), key(b)) })
	end := len(c.buf)
	c.buf = append(c.buf, '{')
	for n, i := range c.order {
		if n+1 < len(c.order) && key(c.order[n+1]) == key(i) {
			continue // a later duplicate wins
		}
		if len(c.buf) > end+1 {
			c.buf = append(c.buf, ',', ' ')
		}
		c.buf = append(c.buf, '"')
		c.buf = append(c.buf, key(i)...)
		c.buf = append(c.buf, '"', ':', ' ')
		c.buf = append(c.buf, c.buf[mem[i].v0:mem[i].v1]...)
	}
	c.buf = append(c.buf, '}')
	n := copy(c.buf[mark:], c.buf[end:])
	c.buf = c.buf[:mark+n]
	c.mem = c.mem[:base]
}
