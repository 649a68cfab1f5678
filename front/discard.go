package front

// Discard is DISCARD ALL | PLANS | SEQUENCES | TEMP | TEMPORARY. What is
// the upper-case word, as the command tag shows it (TEMPORARY as TEMP).
type Discard struct{ What string }

// Deallocate is DEALLOCATE [PREPARE] name | ALL.
type Deallocate struct {
	Name string
	All  bool
}

func parseDiscard(c *cursor) (any, error) {
	c.next() // DISCARD
	t := c.peek()
	switch {
	case t.isWord("all", "plans", "sequences", "temp"):
		c.next()
		return &Discard{What: upper(t.val)}, c.end()
	case t.isWord("temporary"):
		c.next()
		return &Discard{What: "TEMP"}, c.end()
	}
	return nil, c.fail()
}

func parseDeallocate(c *cursor) (any, error) {
	c.next() // DEALLOCATE
	c.word("prepare")
	if c.word("all") {
		return &Deallocate{All: true}, c.end()
	}
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	return &Deallocate{Name: name}, c.end()
}
