package front

// Truncate is TRUNCATE [TABLE] [ONLY] name [*] [, ...]
// [RESTART IDENTITY | CONTINUE IDENTITY] [CASCADE | RESTRICT].
type Truncate struct {
	Tables          []string
	RestartIdentity bool
	Cascade         bool
}

// parseTruncate reads a TRUNCATE statement.
func parseTruncate(c *cursor) (any, error) {
	c.next() // TRUNCATE
	c.word("table")
	n := &Truncate{}
	for {
		c.word("only")
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		c.op("*")
		n.Tables = append(n.Tables, name)
		if !c.op(",") {
			break
		}
	}
	switch {
	case c.words("restart", "identity"):
		n.RestartIdentity = true
	case c.words("continue", "identity"):
	}
	switch {
	case c.word("cascade"):
		n.Cascade = true
	case c.word("restrict"):
	}
	return n, c.end()
}
