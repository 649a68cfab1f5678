package front

// RenameRelation is ALTER MATERIALIZED VIEW [IF EXISTS] name RENAME TO
// new, ALTER VIEW [IF EXISTS] name RENAME TO new, ALTER STREAM [IF
// EXISTS] name RENAME TO new, or ALTER TABLE [IF EXISTS] name RENAME TO
// new. View is true for the first form, which names only a materialized
// view; PlainView for the second, which names only a (plain) view; Stream
// for the third, which names only a stream; ALTER TABLE renames any
// relation, as in PostgreSQL.
type RenameRelation struct {
	View      bool
	PlainView bool
	Stream    bool
	IfExists  bool
	Schema    string
	Name      string
	NewName   string
}

// isRename reports whether the tokens after ALTER MATERIALIZED VIEW or
// ALTER TABLE are [IF EXISTS] name [. name] RENAME TO.
func isRename(c *cursor) bool {
	i := 0
	if c.peek().isWord("if") && c.peekAt(1).isWord("exists") {
		i = 2
	}
	if !c.peekAt(i).isName() {
		return false
	}
	i++
	if c.peekAt(i).isOp(".") && c.peekAt(i+1).isName() {
		i += 2
	}
	return c.peekAt(i).isWord("rename") && c.peekAt(i+1).isWord("to")
}

// parseRename reads [IF EXISTS] name RENAME TO new (isRename holds).
func parseRename(c *cursor, view bool) (any, error) {
	r := &RenameRelation{View: view, IfExists: c.words("if", "exists")}
	var err error
	if r.Schema, r.Name, err = c.qualifiedName(); err != nil {
		return nil, err
	}
	if err := c.expectWords("rename", "to"); err != nil {
		return nil, err
	}
	if r.NewName, err = c.name(); err != nil {
		return nil, err
	}
	return r, c.end()
}
