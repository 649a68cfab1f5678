package front

// parseAlterPlainView reads [IF EXISTS] name RENAME TO new after ALTER
// VIEW; its other forms are refused.
func parseAlterPlainView(c *cursor) (any, error) {
	if isRename(c) {
		n, err := parseRename(c, false)
		if err != nil {
			return nil, err
		}
		r := n.(*RenameRelation)
		r.PlainView = true
		return r, nil
	}
	i := 0
	if c.peek().isWord("if") && c.peekAt(1).isWord("exists") {
		i = 2
	}
	if c.peekAt(i).isName() {
		i++
		if c.peekAt(i).isOp(".") && c.peekAt(i+1).isName() {
			i += 2
		}
	}
	if t := c.peekAt(i); t.kind == tkWord {
		return nil, unsupported(c.src, t, "ALTER VIEW ... %s", upper(t.val)).
			WithHint("ALTER VIEW supports RENAME TO; CREATE OR REPLACE VIEW changes the query.")
	}
	return nil, c.fail()
}

// checkOptionAt returns the index of the WITH of a trailing WITH
// [CASCADED | LOCAL] CHECK OPTION in toks[from:], or -1.
func checkOptionAt(toks []token, from int) int {
	n := len(toks)
	if n-from < 3 || !toks[n-2].isWord("check") || !toks[n-1].isWord("option") {
		return -1
	}
	at := n - 3
	if toks[at].isWord("cascaded", "local") {
		at--
	}
	if at < from || !toks[at].isWord("with") {
		return -1
	}
	return at
}
