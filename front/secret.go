package front

import "streamdb/sqlerr"

// CreateSecret is CREATE SECRET [IF NOT EXISTS] name AS 'value'
// (Materialize's syntax): a value, such as a source database's password,
// that statements name instead of spelling it out.
type CreateSecret struct {
	Name        string
	IfNotExists bool
	Value       string
}

// AlterSecret is ALTER SECRET [IF EXISTS] name AS 'value'.
type AlterSecret struct {
	Name     string
	IfExists bool
	Value    string
}

// DropSecret is DROP SECRET [IF EXISTS] name [, ...] [CASCADE | RESTRICT].
type DropSecret struct {
	Names    []string
	IfExists bool
	Cascade  bool
}

// secretValue reads AS 'value' and the end of the statement. Its errors
// never quote the statement's text: it holds the secret.
func secretValue(c *cursor, stmt string) (string, error) {
	const hint = "Write %s SECRET name AS 'value', the value a string literal."
	if !c.word("as") {
		return "", sqlerr.New(sqlerr.SyntaxError, "%s SECRET needs AS 'value' after the name", stmt).WithHint(hint, stmt)
	}
	t := c.next()
	if t.kind != tkString || !c.atEnd() {
		return "", sqlerr.New(sqlerr.SyntaxError, "%s SECRET takes one string literal after AS", stmt).WithHint(hint, stmt)
	}
	return t.val, nil
}

// parseCreateSecret reads what follows CREATE SECRET.
func parseCreateSecret(c *cursor) (any, error) {
	n := &CreateSecret{IfNotExists: c.words("if", "not", "exists")}
	var err error
	if n.Name, err = secretName(c); err != nil {
		return nil, err
	}
	n.Value, err = secretValue(c, "CREATE")
	return n, err
}

// parseAlterSecret reads what follows ALTER SECRET.
func parseAlterSecret(c *cursor) (any, error) {
	n := &AlterSecret{IfExists: c.words("if", "exists")}
	var err error
	if n.Name, err = secretName(c); err != nil {
		return nil, err
	}
	n.Value, err = secretValue(c, "ALTER")
	return n, err
}

// parseDropSecret reads what follows DROP SECRET.
func parseDropSecret(c *cursor) (any, error) {
	n := &DropSecret{IfExists: c.words("if", "exists")}
	var err error
	if n.Names, n.Cascade, err = dropNames(c, func() (string, error) { return secretName(c) }); err != nil {
		return nil, err
	}
	return n, nil
}

// secretName reads a secret's name, public.name included.
func secretName(c *cursor) (string, error) {
	schema, name, err := c.qualifiedName()
	if err != nil {
		return "", err
	}
	if schema != "" && schema != "public" {
		return "", sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", schema).
			WithHint("streamdb has only the public schema; name the secret without a schema.")
	}
	return name, nil
}
