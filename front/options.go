package front

import (
	"strings"

	"streamdb/sqlerr"
)

// parseOptions reads "(key = value, ...)" after WITH. Keys are lower-cased;
// values are unquoted; a key without a value is "true".
func parseOptions(c *cursor) (map[string]string, error) {
	if err := c.expectOp("("); err != nil {
		return nil, err
	}
	opts := map[string]string{}
	for {
		at := c.peek()
		key, err := c.dottedName()
		if err != nil {
			return nil, err
		}
		key = strings.ToLower(key)
		if _, dup := opts[key]; dup {
			return nil, errorAt(c.src, at, sqlerr.SyntaxError, "option \"%s\" specified more than once", key)
		}
		value := "true"
		if c.op("=") {
			if value, err = optionValue(c); err != nil {
				return nil, err
			}
		}
		opts[key] = value
		if c.op(")") {
			return opts, nil
		}
		if err := c.expectOp(","); err != nil {
			return nil, err
		}
	}
}

// optionValue reads one option or setting value: a string, a (signed)
// number, or a word, unquoted. Tokens written together with no space (10s,
// a.b) make one value.
func optionValue(c *cursor) (string, error) {
	t := c.peek()
	switch {
	case t.kind == tkString || t.kind == tkIdent:
		c.next()
		return t.val, nil
	case t.kind == tkWord || t.kind == tkNumber || t.isOp("-", "+"):
	default:
		return "", c.fail()
	}
	start := c.i
	c.next()
	for !c.atEnd() {
		n := c.peek()
		if n.space || n.isOp(",", ")", ";") || n.kind == tkString {
			break
		}
		c.next()
	}
	if c.i == start+1 && t.isOp("-", "+") {
		return "", c.fail()
	}
	return c.textOf(start, c.i), nil
}
