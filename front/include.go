package front

import (
	"strconv"
	"strings"

	"streamdb/sqlerr"
)

// Include is INCLUDE kind [argument] AS column after a stream's column
// list: a column filled from the message's metadata rather than its JSON.
type Include struct {
	// Kind is one of the IncludeKinds.
	Kind string
	// Header is the header name of INCLUDE header 'name'.
	Header string
	// Token is the position of INCLUDE subject_token n: 1 is the first
	// token, -1 the last.
	Token  int
	Column string
}

// The metadata a stream can include.
const (
	IncludeSubject      = "subject"
	IncludeSubjectToken = "subject_token"
	IncludeHeader       = "header"
	IncludeTimestamp    = "timestamp"
	IncludeSequence     = "sequence"
)

// IncludeKinds lists the metadata kinds, in the order error hints name them.
var IncludeKinds = []string{IncludeSubject, IncludeSubjectToken, IncludeHeader, IncludeTimestamp, IncludeSequence}

// parseInclude reads "kind [argument] AS column" after INCLUDE.
func parseInclude(c *cursor) (Include, error) {
	var inc Include
	t := c.peek()
	hint := "Write INCLUDE subject | subject_token <n> | header '<name>' | timestamp | sequence AS <column>."
	if t.kind != tkWord {
		return inc, errorAt(c.src, t, sqlerr.SyntaxError, "INCLUDE needs what to include").WithHint("%s", hint)
	}
	kind := strings.ToLower(t.val)
	known := false
	for _, k := range IncludeKinds {
		known = known || k == kind
	}
	if !known {
		return inc, errorAt(c.src, t, sqlerr.SyntaxError, "unknown INCLUDE kind %q: a stream includes subject, subject_token, header, timestamp or sequence", t.val).WithHint("%s", hint)
	}
	c.next()
	inc.Kind = kind
	switch kind {
	case IncludeHeader:
		a := c.peek()
		if a.kind != tkString {
			return inc, errorAt(c.src, a, sqlerr.SyntaxError, "INCLUDE header needs the header's name as a string").
				WithHint("Write INCLUDE header 'Trace-Id' AS trace_id.")
		}
		if a.val == "" {
			return inc, errorAt(c.src, a, sqlerr.InvalidParameterValue, "INCLUDE header needs a non-empty header name").
				WithHint("Write INCLUDE header 'Trace-Id' AS trace_id.")
		}
		c.next()
		inc.Header = a.val
	case IncludeSubjectToken:
		a := c.peek()
		neg := false
		if a.isOp("-") {
			neg = true
			c.next()
			a = c.peek()
		}
		n, err := strconv.Atoi(a.val)
		if a.kind != tkNumber || err != nil {
			return inc, errorAt(c.src, a, sqlerr.SyntaxError, "INCLUDE subject_token needs the token's position as an integer").
				WithHint("Write INCLUDE subject_token 2 AS region: 1 is the first token, -1 the last.")
		}
		if n == 0 || n > 255 {
			return inc, errorAt(c.src, a, sqlerr.InvalidParameterValue, "subject_token position %s is out of range", a.val).
				WithHint("1 is the subject's first token, 2 the second, -1 the last; 0 is none.")
		}
		c.next()
		if neg {
			n = -n
		}
		inc.Token = n
	}
	if !c.word("as") {
		return inc, errorAt(c.src, c.peek(), sqlerr.SyntaxError, "INCLUDE %s needs AS and a column name", kind).WithHint("%s", hint)
	}
	name, err := c.name()
	if err != nil {
		return inc, err
	}
	inc.Column = name
	return inc, nil
}
