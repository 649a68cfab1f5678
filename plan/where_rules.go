package plan

// WhereRule is one rewrite of a WHERE clause's filter over what its FROM
// clause built, run while a query is bound: for ad-hoc queries and views
// alike, before the streaming rules (StreamingRules) of a view. A rule
// keeps the query's result; it returns the node that replaces the filter,
// which may be the filter itself, changed or not. Each lives in a file of
// its own (rule_*.go).
type WhereRule struct {
	Name  string
	Apply func(*Filter) Node
}

// WhereRules are the rewrites of a WHERE filter, in the order they run:
// a bound on a rank (rn <= N) makes the ranking below a top-N, then the
// conditions move into the inner joins below (FROM a, b WHERE a.k = b.k
// joins on keys, not as a cross join).
var WhereRules = []WhereRule{
	boundRanksRule,
	pushFilterIntoJoinsRule,
}

// RewriteWhere applies WhereRules to f in order, until one replaces the
// filter with another kind of node. trace, if not nil, is called after
// each rule that ran, with the plan it made.
func RewriteWhere(f *Filter, trace func(rule string, after Node)) Node {
	var n Node = f
	for _, r := range WhereRules {
		f, ok := n.(*Filter)
		if !ok {
			break
		}
		n = r.Apply(f)
		if trace != nil {
			trace(r.Name, n)
		}
	}
	return n
}
