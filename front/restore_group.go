package front

// RestoreViewGroup is ALTER MATERIALIZED VIEW name RESTORE GROUP FROM
// 'checkpoint directory': the view-group holding the view takes its
// state and source positions from that checkpoint of another server (a
// cluster command: the step a move of a group between servers takes).
type RestoreViewGroup struct {
	View string
	Dir  string
}

// parseRestoreGroup reads name RESTORE GROUP FROM 'dir' after ALTER
// MATERIALIZED VIEW.
func parseRestoreGroup(c *cursor) (any, error) {
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	if err := c.expectWords("restore", "group", "from"); err != nil {
		return nil, err
	}
	t := c.next()
	if t.kind != tkString {
		return nil, syntaxError(c.src, t)
	}
	return &RestoreViewGroup{View: name, Dir: t.val}, c.end()
}
