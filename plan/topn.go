package plan

import (
	"fmt"
	"strings"

	"streamdb/expr"
	"streamdb/types"
)

// Ranking functions a TopN can compute as its extra output column.
const (
	RowNumber = "row_number"
	Rank      = "rank"
	DenseRank = "dense_rank"
)

// TopN ranks the rows of each partition (rows with equal PartitionBy
// values) by Order and keeps those ranked Offset+1 .. Offset+Count. It
// stands for two things:
//
//   - a ranking window function (Func is row_number, rank or dense_rank):
//     the output is the input columns plus the rank, computed over the
//     whole partition; Count bounds the rank (rank <= Count) when an outer
//     filter on the rank allows it, and is -1 otherwise (every row kept);
//   - ORDER BY ... LIMIT in a materialized view (Func is ""): one
//     partition, no extra column, row numbers Offset+1 .. Offset+Count;
//     with WithTies (FETCH ... WITH TIES) also the rows after the
//     Offset+Count-th that are equal to it in Order.
//
// Rows that tie on Order are ranked by their full value encoding, so the
// result is deterministic (PostgreSQL's choice among ties is arbitrary).
// The output has no order.
type TopN struct {
	Input       Node
	PartitionBy []expr.Expr // over the input row
	Order       []SortKey   // over the input row
	Func        string      // "", RowNumber, Rank or DenseRank
	// RankName is how the query names the rank column, for messages.
	RankName string
	Count    int64 // -1: no bound
	Offset   int64 // only without Func
	WithTies bool  // only without Func
	Cols     []types.Column
}

func (t *TopN) Schema() []types.Column { return t.Cols }
func (t *TopN) Children() []Node       { return []Node{t.Input} }
func (t *TopN) Describe() string {
	var sb strings.Builder
	sb.WriteString("TopN")
	if t.Func != "" {
		fmt.Fprintf(&sb, " %s()", t.Func)
	}
	parts := make([]string, len(t.PartitionBy))
	for i, p := range t.PartitionBy {
		parts[i] = p.String()
	}
	fmt.Fprintf(&sb, " partition=[%s] order=[%s]", strings.Join(parts, ", "), describeOrder(t.Order))
	if t.Count >= 0 {
		fmt.Fprintf(&sb, " limit=%d", t.Count)
	} else {
		sb.WriteString(" limit=all")
	}
	if t.Offset > 0 {
		fmt.Fprintf(&sb, " offset=%d", t.Offset)
	}
	if t.WithTies {
		sb.WriteString(" with ties")
	}
	return sb.String()
}

// HasRank reports whether the output carries the rank as its last column.
func (t *TopN) HasRank() bool { return t.Func != "" }

// RankCol is the index of the rank column (valid when HasRank).
func (t *TopN) RankCol() int { return len(t.Cols) - 1 }

func describeOrder(keys []SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.Expr.String()
		if k.Desc {
			parts[i] += " DESC"
		}
	}
	return strings.Join(parts, ", ")
}

// LimitAsTopN returns the TopN that computes Limit l over a Sort (or over
// anything, ordering by nothing) as a set of rows: what ORDER BY ... LIMIT
// means in a materialized view, whose rows have no order.
func LimitAsTopN(l *Limit) *TopN {
	t := &TopN{Input: l.Input, Count: l.Count, Offset: l.Offset, WithTies: l.WithTies, Cols: l.Schema()}
	if s, ok := l.Input.(*Sort); ok {
		t.Input, t.Order = s.Input, s.Keys
	}
	return t
}
