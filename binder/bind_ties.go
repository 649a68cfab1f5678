package binder

import (
	"streamdb/plan"
	"streamdb/sqlerr"
)

// markWithTies marks the Limit of a query whose outermost block ends in
// FETCH ... WITH TIES (the front turned it into ... ONLY). The Limit is the
// root or under the Project that drops ORDER BY columns the select list
// does not show.
func markWithTies(root plan.Node) error {
	n := root
	if p, ok := n.(*plan.Project); ok {
		n = p.Input
	}
	l, ok := n.(*plan.Limit)
	if !ok {
		return sqlerr.New(sqlerr.FeatureNotSupported, "FETCH ... WITH TIES is not supported in this query")
	}
	if _, sorted := l.Input.(*plan.Sort); !sorted {
		return sqlerr.New(sqlerr.SyntaxError, "WITH TIES cannot be specified without ORDER BY clause")
	}
	l.WithTies = true
	return nil
}
