package front

// AlterOwner is ALTER {TABLE | VIEW | MATERIALIZED VIEW | SEQUENCE |
// STREAM} [IF EXISTS] [ONLY] name OWNER TO role, which pg_dump writes
// after every object it creates. Kind is the object kind as written, in
// upper case; Role is the role's name (CURRENT_USER, SESSION_USER and
// CURRENT_ROLE as those words, in upper case).
type AlterOwner struct {
	Kind         string
	IfExists     bool
	Schema, Name string
	Role         string
}

// isAlterOwner reports whether the tokens after ALTER kind are
// [IF EXISTS] [ONLY] name OWNER TO ...
func isAlterOwner(c *cursor) bool {
	i := 0
	if c.peekAt(i).isWord("if") && c.peekAt(i+1).isWord("exists") {
		i += 2
	}
	if c.peekAt(i).isWord("only") && c.peekAt(i+1).isName() {
		i++
	}
	if !c.peekAt(i).isName() {
		return false
	}
	i++
	if c.peekAt(i).isOp(".") && c.peekAt(i+1).isName() {
		i += 2
	}
	return c.peekAt(i).isWord("owner") && c.peekAt(i+1).isWord("to")
}

func parseAlterOwner(c *cursor, kind string) (any, error) {
	n := &AlterOwner{Kind: kind, IfExists: c.words("if", "exists")}
	if c.peek().isWord("only") && c.peekAt(1).isName() {
		c.next()
	}
	var err error
	if n.Schema, n.Name, err = c.qualifiedName(); err != nil {
		return nil, err
	}
	c.next() // OWNER
	c.next() // TO
	t := c.peek()
	switch {
	case t.isWord("current_user", "session_user", "current_role"):
		c.next()
		n.Role = upper(t.val)
	default:
		if n.Role, err = c.name(); err != nil {
			return nil, err
		}
	}
	return n, c.end()
}
