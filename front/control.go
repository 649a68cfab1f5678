package front

// parseSavepoint reads SAVEPOINT name.
func parseSavepoint(c *cursor) (any, error) {
	c.next() // SAVEPOINT
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	return &Savepoint{Name: name}, c.end()
}

// parseRelease reads RELEASE [SAVEPOINT] name.
func parseRelease(c *cursor) (any, error) {
	c.next() // RELEASE
	c.word("savepoint")
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	return &ReleaseSavepoint{Name: name}, c.end()
}

// parseRollback reads ROLLBACK / ABORT [WORK | TRANSACTION] and
// ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name | CHECKPOINT n |
// TIMESTAMP '...'.
func parseRollback(c *cursor) (any, error) {
	first := c.next()
	c.word("work", "transaction")
	if !first.isWord("rollback") || !c.word("to") {
		c.words("and", "no", "chain")
		return &Transaction{Action: TxnRollback}, c.end()
	}
	next := c.peekAt(1)
	switch {
	case c.peek().isWord("checkpoint") && (next.kind == tkNumber || next.kind == tkString),
		c.peek().isWord("timestamp", "timestamptz") && (next.kind == tkString || next.isWord("with")):
		p, end, err := readPoint(c.src, c.toks, c.i)
		if err != nil {
			return nil, err
		}
		c.i = end
		return &RollbackTo{Kind: p.Kind, ID: p.ID, Time: p.Time}, c.end()
	}
	c.word("savepoint")
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	return &RollbackTo{Kind: PointSavepoint, Name: name}, c.end()
}

// parseTransaction reads BEGIN / START TRANSACTION [modes], COMMIT / END.
func parseTransaction(c *cursor) (any, error) {
	first := c.next()
	switch {
	case first.isWord("begin"):
		c.word("work", "transaction")
		return beginModes(c)
	case first.isWord("start"):
		if err := c.expectWords("transaction"); err != nil {
			return nil, err
		}
		return beginModes(c)
	}
	c.word("work", "transaction")
	c.words("and", "no", "chain")
	return &Transaction{Action: TxnCommit}, c.end()
}

// beginModes reads the transaction modes after BEGIN / START TRANSACTION
// (the same as SET TRANSACTION's), each a SET LOCAL of the block.
func beginModes(c *cursor) (any, error) {
	t := &Transaction{Action: TxnBegin}
	if c.atEnd() {
		return t, nil
	}
	m, err := setTransaction(c, "")
	if err != nil {
		return nil, err
	}
	first := m.(*Set)
	t.Modes = append([]*Set{first}, first.Also...)
	first.Also = nil
	for _, m := range t.Modes {
		m.Local = true
	}
	return t, nil
}
