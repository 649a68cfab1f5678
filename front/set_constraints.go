package front

// SetConstraints is SET CONSTRAINTS { ALL | name [, ...] } { DEFERRED |
// IMMEDIATE }: All, or the constraints Names (Schemas: each name's
// schema, "" when not dotted).
type SetConstraints struct {
	All       bool
	Names     []string
	Schemas   []string
	Immediate bool
}

// parseSetConstraints reads SET CONSTRAINTS after CONSTRAINTS.
func parseSetConstraints(c *cursor) (any, error) {
	n := &SetConstraints{}
	if !c.word("all") {
		for {
			schema, name, err := c.qualifiedName()
			if err != nil {
				return nil, err
			}
			n.Names = append(n.Names, name)
			n.Schemas = append(n.Schemas, schema)
			if !c.op(",") {
				break
			}
		}
	} else {
		n.All = true
	}
	switch {
	case c.word("immediate"):
		n.Immediate = true
	case c.word("deferred"):
	default:
		return nil, c.fail()
	}
	return n, c.end()
}
