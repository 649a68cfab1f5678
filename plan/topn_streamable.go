package plan

import (
	"strings"

	"streamdb/sqlerr"
)

// StreamingTopN returns the TopN a streaming dataflow runs for n (a Sort,
// Limit or TopN), or nil for a Sort without LIMIT, whose order a
// materialized view does not keep (its rows are a set, as in PostgreSQL).
func StreamingTopN(n Node) *TopN {
	switch n := n.(type) {
	case *Limit:
		return LimitAsTopN(n)
	case *TopN:
		return n
	}
	return nil
}

// CheckStreamableTopN refuses, at CREATE time, a ranking window function
// that a view cannot keep: without an upper bound on the rank, an insert
// could change the rank of every row of its partition.
func CheckStreamableTopN(n Node) error {
	t := StreamingTopN(n)
	if t == nil || !t.HasRank() || t.Count >= 0 {
		return nil
	}
	name := t.RankName
	if name == "" {
		name = "rn"
	}
	return sqlerr.New(sqlerr.FeatureNotSupported,
		"%s() in a materialized view needs an outer filter %s <= N (top-N)", strings.ToUpper(t.Func), name).
		WithHint("Rank in a subquery and filter it: SELECT ... FROM (SELECT ..., %s() OVER (...) AS %s FROM ...) t WHERE %s <= 10.", t.Func, name, name)
}
