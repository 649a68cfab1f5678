package front

// Lock is LOCK [TABLE] [ONLY] name [*] [, ...] [IN lockmode MODE]
// [NOWAIT]. Tables are the names as written (schema.name or name).
type Lock struct {
	Tables []QualifiedName
	Mode   string // the lock mode in upper case, "ACCESS EXCLUSIVE" when not written
}

// QualifiedName is a name with its schema ("" when not written).
type QualifiedName struct{ Schema, Name string }

// lockModes are the words of PostgreSQL's lock modes.
var lockModes = []string{"ACCESS SHARE", "ROW SHARE", "ROW EXCLUSIVE", "SHARE UPDATE EXCLUSIVE", "SHARE",
	"SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"}

func parseLock(c *cursor) (any, error) {
	c.next() // LOCK
	c.word("table")
	n := &Lock{Mode: "ACCESS EXCLUSIVE"}
	for {
		c.word("only")
		schema, name, err := c.qualifiedName()
		if err != nil {
			return nil, err
		}
		c.op("*")
		n.Tables = append(n.Tables, QualifiedName{Schema: schema, Name: name})
		if !c.op(",") {
			break
		}
	}
	if c.word("in") {
		var words []string
		for !c.peek().isWord("mode") {
			t := c.peek()
			if t.kind != tkWord || len(words) == 3 {
				return nil, c.fail()
			}
			c.next()
			words = append(words, upper(t.val))
		}
		c.next() // MODE
		mode := ""
		for i, w := range words {
			if i > 0 {
				mode += " "
			}
			mode += w
		}
		known := false
		for _, m := range lockModes {
			known = known || m == mode
		}
		if !known {
			return nil, c.fail()
		}
		n.Mode = mode
	}
	c.word("nowait")
	return n, c.end()
}
