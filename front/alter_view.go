package front

import "streamdb/sqlerr"

// parseAlterView reads name [WITH (option = 'value', ...)] AS query after
// ALTER MATERIALIZED VIEW: the same shape as CREATE MATERIALIZED VIEW
// (without column names), marked Alter.
func parseAlterView(st *Statement, c *cursor) (any, error) {
	if isRename(c) {
		return parseRename(c, true)
	}
	if t := c.peek(); t.isWord("if") {
		return nil, unsupported(c.src, t, "ALTER MATERIALIZED VIEW IF EXISTS")
	}
	if c.peekAt(1).isWord("restore") {
		return parseRestoreGroup(c)
	}
	if c.peekAt(1).isWord("rename", "set", "owner", "reset") {
		return nil, unsupported(c.src, c.peekAt(1), "ALTER MATERIALIZED VIEW ... %s", upper(c.peekAt(1).val))
	}
	if c.peekAt(1).isOp("(") {
		return nil, sqlerr.New(sqlerr.SyntaxError, "ALTER MATERIALIZED VIEW takes no column names").
			WithHint("Name the columns in the query with AS.")
	}
	n, err := parseCreateView(st, c, KindMaterializedView, false)
	if err != nil {
		return nil, err
	}
	v := n.(*CreateMaterializedView)
	if v.NoData {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ALTER MATERIALIZED VIEW ... AS ... WITH NO DATA is not supported").
			WithHint("Leave out WITH NO DATA: the altered view keeps its rows current.")
	}
	v.Alter = true
	return v, nil
}
