package front

// CreateSink is CREATE SINK [IF NOT EXISTS] name FROM view INTO 'subject'
// [WITH (format = 'json', envelope = 'changelog' | 'upsert' |
// 'debezium')]: publish a view's rows and then its changes to a NATS
// subject.
type CreateSink struct {
	Schema, Name string
	IfNotExists  bool
	View         string
	ViewSchema   string
	Subject      string
	Options      map[string]string
}

// DropSink is DROP SINK [IF EXISTS] name [, ...].
type DropSink struct {
	Names    []string
	IfExists bool
}

// parseCreateSink reads CREATE SINK after the keyword.
func parseCreateSink(c *cursor) (any, error) {
	n := &CreateSink{}
	n.IfNotExists = c.words("if", "not", "exists")
	var err error
	if n.Schema, n.Name, err = c.qualifiedName(); err != nil {
		return nil, err
	}
	if err := c.expectWords("from"); err != nil {
		return nil, err
	}
	if n.ViewSchema, n.View, err = c.qualifiedName(); err != nil {
		return nil, err
	}
	if err := c.expectWords("into"); err != nil {
		return nil, err
	}
	t := c.next()
	if t.kind != tkString {
		return nil, syntaxError(c.src, t)
	}
	n.Subject = t.val
	if c.word("with") {
		if n.Options, err = parseOptions(c); err != nil {
			return nil, err
		}
	}
	return n, c.end()
}

// parseDropSink reads DROP SINK after the keyword.
func parseDropSink(c *cursor) (any, error) {
	d := &DropSink{IfExists: c.words("if", "exists")}
	for {
		_, name, err := c.qualifiedName()
		if err != nil {
			return nil, err
		}
		d.Names = append(d.Names, name)
		if !c.op(",") {
			break
		}
	}
	c.word("restrict")
	return d, c.end()
}
