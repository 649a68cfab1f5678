package front

// cursor walks the tokens of a statement for the hand-written parsers.
type cursor struct {
	src  string
	toks []token
	i    int
}

// peek returns the current token (the end-of-input token past the end).
func (c *cursor) peek() token { return tokenOrEOF(c.src, c.toks, c.i) }

// peekAt returns the token k places ahead of the current one.
func (c *cursor) peekAt(k int) token { return tokenOrEOF(c.src, c.toks, c.i+k) }

// next returns the current token and moves past it.
func (c *cursor) next() token {
	t := c.peek()
	if c.i < len(c.toks) {
		c.i++
	}
	return t
}

// atEnd reports whether all tokens have been read.
func (c *cursor) atEnd() bool { return c.i >= len(c.toks) }

// word moves past the current token if it is one of the given words.
func (c *cursor) word(words ...string) bool {
	if c.peek().isWord(words...) {
		c.i++
		return true
	}
	return false
}

// words moves past a sequence of words if all of them come next.
func (c *cursor) words(words ...string) bool {
	if matchWords(c.toks, c.i, words) {
		c.i += len(words)
		return true
	}
	return false
}

// expectWords requires a sequence of words.
func (c *cursor) expectWords(words ...string) error {
	for _, w := range words {
		if !c.word(w) {
			return c.fail()
		}
	}
	return nil
}

// op moves past the current token if it is the operator o.
func (c *cursor) op(o string) bool {
	if c.peek().isOp(o) {
		c.i++
		return true
	}
	return false
}

// expectOp requires the operator o.
func (c *cursor) expectOp(o string) error {
	if !c.op(o) {
		return c.fail()
	}
	return nil
}

// fail returns a syntax error at the current token.
func (c *cursor) fail() error { return syntaxError(c.src, c.peek()) }

// end requires that all tokens have been read.
func (c *cursor) end() error {
	if !c.atEnd() {
		return c.fail()
	}
	return nil
}

// name reads an identifier.
func (c *cursor) name() (string, error) {
	t := c.peek()
	if !t.isName() {
		return "", c.fail()
	}
	c.i++
	return t.val, nil
}

// qualifiedName reads name or schema.name.
func (c *cursor) qualifiedName() (schema, name string, err error) {
	if name, err = c.name(); err != nil {
		return "", "", err
	}
	if c.peek().isOp(".") && c.peekAt(1).isName() {
		c.i++
		schema = name
		name, err = c.name()
	}
	return schema, name, err
}

// nameTokens reads "(a, b, ...)" and returns the name tokens.
func (c *cursor) nameTokens() ([]token, error) {
	if err := c.expectOp("("); err != nil {
		return nil, err
	}
	var names []token
	for {
		if !c.peek().isName() {
			return nil, c.fail()
		}
		names = append(names, c.next())
		if c.op(")") {
			return names, nil
		}
		if err := c.expectOp(","); err != nil {
			return nil, err
		}
	}
}

// nameList reads "(a, b, ...)".
func (c *cursor) nameList() ([]string, error) {
	toks, err := c.nameTokens()
	names := make([]string, len(toks))
	for i, t := range toks {
		names[i] = t.val
	}
	return names, err
}

// dottedName reads a setting or option name such as
// execution.checkpointing.min-pause: words joined by '.' or '-' with no
// space between them, or a quoted identifier or string.
func (c *cursor) dottedName() (string, error) {
	t := c.peek()
	switch t.kind {
	case tkIdent, tkString:
		c.i++
		return t.val, nil
	case tkWord:
	default:
		return "", c.fail()
	}
	name := t.val
	c.i++
	for {
		sep, part := c.peek(), c.peekAt(1)
		if !sep.isOp(".", "-") || sep.space || part.space || !(part.kind == tkWord || part.kind == tkNumber) {
			return name, nil
		}
		name += sep.val + part.val
		c.i += 2
	}
}

// textOf returns the original text of toks[from:to].
func (c *cursor) textOf(from, to int) string {
	if from >= to {
		return ""
	}
	return c.src[c.toks[from].pos:c.toks[to-1].end]
}
