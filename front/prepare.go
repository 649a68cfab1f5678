package front

// Prepare is PREPARE name [(type, ...)] AS statement: a prepared statement
// made in SQL, which EXECUTE runs and DEALLOCATE removes.
type Prepare struct {
	Name string
	// Types are the parameter types as written ("int", "numeric(10,2)"),
	// for $1, $2, ...; parameters past them are inferred.
	Types []string
	// Body is the text of the statement prepared; BodyChars is how many
	// characters of the PREPARE statement come before it (to place the
	// positions of errors in Body).
	Body      string
	BodyChars int
}

// Execute is EXECUTE name [(arg, ...)]: each Arg is an expression's text.
type Execute struct {
	Name string
	Args []string
}

// preparable are the words that start a statement PREPARE accepts.
var preparable = setOf("select", "with", "values", "table", "insert", "update", "delete")

func parsePrepare(c *cursor) (any, error) {
	c.next() // PREPARE
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	n := &Prepare{Name: name}
	if c.peek().isOp("(") {
		if n.Types, err = c.exprList(); err != nil {
			return nil, err
		}
	}
	if err := c.expectWords("as"); err != nil {
		return nil, err
	}
	first := c.peek()
	if !(first.isOp("(") || first.kind == tkWord && preparable[first.val]) {
		return nil, c.fail()
	}
	n.Body = c.src[first.pos:c.toks[len(c.toks)-1].end]
	n.BodyChars = charPos(c.src, first.pos) - 1
	return n, nil
}

func parseExecute(c *cursor) (any, error) {
	c.next() // EXECUTE
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	n := &Execute{Name: name}
	if c.peek().isOp("(") {
		if n.Args, err = c.exprList(); err != nil {
			return nil, err
		}
	}
	return n, c.end()
}

// exprList reads "(item, item, ...)" and returns each item's text, split
// at the commas outside nested parentheses and brackets.
func (c *cursor) exprList() ([]string, error) {
	if err := c.expectOp("("); err != nil {
		return nil, err
	}
	var items []string
	depth, from := 0, c.i
	for !c.atEnd() {
		t := c.peek()
		switch {
		case t.isOp("(", "["):
			depth++
		case t.isOp(")", "]") && depth > 0:
			depth--
		case depth == 0 && t.isOp(",", ")"):
			if c.i == from {
				return nil, c.fail() // an empty item
			}
			items = append(items, c.textOf(from, c.i))
			c.next()
			if t.isOp(")") {
				return items, nil
			}
			from = c.i
			continue
		}
		c.next()
	}
	return nil, c.fail()
}
