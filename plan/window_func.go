package plan

import (
	"fmt"
	"strings"

	"streamdb/expr"
	"streamdb/types"
)

// FrameBoundKind is where a window frame starts or ends.
type FrameBoundKind int

const (
	UnboundedPreceding FrameBoundKind = iota
	OffsetPreceding
	CurrentRow
	OffsetFollowing
	UnboundedFollowing
)

// FrameBound is one end of a frame. Offset is a row count (ROWS) or a
// distance in the ORDER BY key's units (RANGE); it is set only for the
// Offset kinds.
type FrameBound struct {
	Kind       FrameBoundKind
	Offset     types.Datum
	OffsetType types.Type
}

func (b FrameBound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case OffsetPreceding:
		return types.FormatText(b.Offset, b.OffsetType) + " PRECEDING"
	case CurrentRow:
		return "CURRENT ROW"
	case OffsetFollowing:
		return types.FormatText(b.Offset, b.OffsetType) + " FOLLOWING"
	}
	return "UNBOUNDED FOLLOWING"
}

// Frame is a window frame: ROWS (Rows), GROUPS (Groups: offsets count
// peer groups) or RANGE between Start and End. PostgreSQL's default is
// RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, which with no ORDER
// BY is the whole partition.
type Frame struct {
	Rows       bool
	Groups     bool
	Start, End FrameBound
	// RangeStart and RangeEnd compute, for RANGE with offsets, the key
	// values a row's frame starts and ends at (the ORDER BY key minus
	// or plus the offset, as the direction says); nil otherwise.
	RangeStart, RangeEnd expr.Expr
}

func (f Frame) String() string {
	mode := "RANGE"
	switch {
	case f.Rows:
		mode = "ROWS"
	case f.Groups:
		mode = "GROUPS"
	}
	return fmt.Sprintf("%s BETWEEN %s AND %s", mode, f.Start, f.End)
}

// WindowFunc computes one window function over its input's rows and
// appends the result as a last column. Ad-hoc queries run it (all rows
// at once); a materialized view refuses it, except the ranking functions,
// which bind to TopN instead.
//
// Func is lag, lead, first_value, last_value, nth_value, ntile,
// percent_rank, cume_dist, row_number, rank, dense_rank, or an aggregate
// (then Agg is its call, evaluated over the frame). Args are the
// function's arguments over input rows.
type WindowFunc struct {
	Input       Node
	Func        string
	Args        []expr.Expr
	Agg         *AggCall
	PartitionBy []expr.Expr
	Order       []SortKey
	Frame       Frame
	Cols        []types.Column
}

func (w *WindowFunc) Schema() []types.Column { return w.Cols }
func (w *WindowFunc) Children() []Node       { return []Node{w.Input} }
func (w *WindowFunc) Describe() string {
	var args []string
	if w.Agg != nil {
		args = append(args, w.Agg.String())
	} else {
		for _, a := range w.Args {
			args = append(args, a.String())
		}
	}
	d := fmt.Sprintf("WindowFunc %s(%s)", w.Func, strings.Join(args, ", "))
	if len(w.PartitionBy) > 0 {
		var p []string
		for _, e := range w.PartitionBy {
			p = append(p, e.String())
		}
		d += " partition=[" + strings.Join(p, ", ") + "]"
	}
	if len(w.Order) > 0 {
		var o []string
		for _, k := range w.Order {
			s := k.Expr.String()
			if k.Desc {
				s += " DESC"
			}
			o = append(o, s)
		}
		d += " order=[" + strings.Join(o, ", ") + "]"
	}
	return d + " " + w.Frame.String()
}
