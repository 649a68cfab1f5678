package front

// CreateSchema is CREATE SCHEMA [IF NOT EXISTS] name, without elements.
type CreateSchema struct {
	Name        string
	IfNotExists bool
}

// DropSchema is DROP SCHEMA [IF EXISTS] name [, ...] [CASCADE | RESTRICT].
type DropSchema struct {
	Names    []string
	IfExists bool
	Cascade  bool
}

// parseCreateSchema reads [IF NOT EXISTS] name after CREATE SCHEMA.
// AUTHORIZATION and schema elements are refused.
func parseCreateSchema(c *cursor) (any, error) {
	n := &CreateSchema{IfNotExists: c.words("if", "not", "exists")}
	if t := c.peek(); t.isWord("authorization") {
		return nil, unsupported(c.src, t, "CREATE SCHEMA ... AUTHORIZATION")
	}
	var err error
	if n.Name, err = c.name(); err != nil {
		return nil, err
	}
	if t := c.peek(); t.kind == tkWord {
		return nil, unsupported(c.src, t, "CREATE SCHEMA ... %s", upper(t.val)).
			WithHint("Create the schema's objects with their own statements.")
	}
	return n, c.end()
}

// parseDropSchema reads [IF EXISTS] name [, ...] [CASCADE | RESTRICT]
// after DROP SCHEMA.
func parseDropSchema(c *cursor) (any, error) {
	n := &DropSchema{IfExists: c.words("if", "exists")}
	var err error
	if n.Names, n.Cascade, err = dropNames(c, c.name); err != nil {
		return nil, err
	}
	return n, nil
}

// dropNames reads the name [, ...] [CASCADE | RESTRICT] that ends a DROP
// statement, each name with read, and the end of the statement.
func dropNames(c *cursor, read func() (string, error)) (names []string, cascade bool, err error) {
	for {
		name, err := read()
		if err != nil {
			return nil, false, err
		}
		names = append(names, name)
		if !c.op(",") {
			break
		}
	}
	switch {
	case c.word("cascade"):
		cascade = true
	case c.word("restrict"):
	}
	return names, cascade, c.end()
}
