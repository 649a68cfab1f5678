// Package plan holds logical query plans: trees of relational operators over
// bound expressions. The same tree runs as a batch query (ad-hoc SELECT) or
// is turned into a streaming dataflow (a materialized view) by package exec.
package plan

import (
	"context"
	"fmt"
	"strings"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/types"
)

// Node is one relational operator.
type Node interface {
	// Schema is the output columns.
	Schema() []types.Column
	// Children are the inputs.
	Children() []Node
	// Describe is the one-line EXPLAIN text of the node itself.
	Describe() string
}

// Scan reads a catalog object: a stream (its messages, as a streaming
// source) or a materialized view (its stored rows).
type Scan struct {
	Object *catalog.Descriptor
	Cols   []types.Column
	// Keys are the member names of Cols in the object's messages
	// (catalog.Column.MemberKey when the scan was bound); nil when each
	// is its column's name.
	Keys []string
	// Rows computes the rows of a system table (Object.Kind is
	// catalog.KindSystem); nil for stored objects.
	Rows func() []types.Row
	// Each, when set, hands the rows Rows gives to emit one at a time
	// instead, without holding them (a table as a transaction block sees
	// it); batch execution prefers it.
	Each func(ctx context.Context, emit func(types.Row) error) error
	// Watermark is a stream's WATERMARK clause, bound; nil if none.
	Watermark *Watermark
	// StoredKey, if set, is the positions of the columns the object's
	// stored rows are keyed by (a keyed view's group columns, a table's
	// primary key): a query that fixes all of them reads one row instead
	// of scanning.
	StoredKey []int
	// Generated are a stream's generated columns, bound over its columns:
	// the reader computes each as it decodes a message, so every view
	// reads them as stored values. Empty for other objects (a table
	// stores its generated values when they are written).
	Generated []GeneratedColumn
}

// GeneratedColumn is the column at Col, computed by Expr (cast to the
// column's type) from the other columns of the row.
type GeneratedColumn struct {
	Col  int
	Expr expr.Expr
}

// Watermark is WATERMARK FOR <column> AS <expr>: Col is the event-time
// column and Expr computes each row's watermark candidate.
type Watermark struct {
	Col  int
	Expr expr.Expr
	Text string // as declared, for EXPLAIN
}

func (s *Scan) Schema() []types.Column { return s.Cols }
func (s *Scan) Children() []Node       { return nil }
func (s *Scan) Describe() string {
	d := fmt.Sprintf("Scan %s %s", s.Object.Kind, s.Object.Name)
	if s.Watermark != nil {
		d += " watermark=(" + s.Watermark.Text + ")"
	}
	return d
}

// Values produces constant rows (SELECT without FROM).
type Values struct {
	Rows [][]expr.Expr
	Cols []types.Column
}

func (v *Values) Schema() []types.Column { return v.Cols }
func (v *Values) Children() []Node       { return nil }
func (v *Values) Describe() string       { return fmt.Sprintf("Values (%d rows)", len(v.Rows)) }

// Filter keeps the rows for which Cond is true.
type Filter struct {
	Input Node
	Cond  expr.Expr
}

func (f *Filter) Schema() []types.Column { return f.Input.Schema() }
func (f *Filter) Children() []Node       { return []Node{f.Input} }
func (f *Filter) Describe() string       { return "Filter " + f.Cond.String() }

// Project computes Exprs over each input row.
type Project struct {
	Input Node
	Exprs []expr.Expr
	Cols  []types.Column
}

func (p *Project) Schema() []types.Column { return p.Cols }
func (p *Project) Children() []Node       { return []Node{p.Input} }
func (p *Project) Describe() string {
	if len(p.Exprs) == 0 {
		return "Project (no columns)"
	}
	parts := make([]string, len(p.Exprs))
	for i, e := range p.Exprs {
		parts[i] = e.String()
		if p.Cols[i].Name != "" && p.Cols[i].Name != parts[i] {
			parts[i] += " AS " + p.Cols[i].Name
		}
	}
	return "Project " + strings.Join(parts, ", ")
}

// AggCall is one aggregate function call. Arg is nil for count(*).
type AggCall struct {
	Func     string // count, sum, min, max, avg
	Arg      expr.Expr
	Distinct bool
	T        types.Type // result type
}

func (a AggCall) String() string {
	arg := "*"
	if a.Arg != nil {
		arg = a.Arg.String()
		if a.Distinct {
			arg = "DISTINCT " + arg
		}
	}
	return a.Func + "(" + arg + ")"
}

// Aggregate groups by GroupBy and computes Aggs. Its output is the group
// key columns followed by one column per aggregate.
type Aggregate struct {
	Input   Node
	GroupBy []expr.Expr
	Aggs    []AggCall
	Cols    []types.Column
	// UID, when set, is the operator id the user gave the aggregate
	// (WITH (uids = '...') on its view names a WITH query): the
	// aggregate's id is derived from it alone, so its state follows it
	// through rewrites of the query around it.
	UID string
}

func (a *Aggregate) Schema() []types.Column { return a.Cols }
func (a *Aggregate) Children() []Node       { return []Node{a.Input} }
func (a *Aggregate) Describe() string {
	keys := make([]string, len(a.GroupBy))
	for i, g := range a.GroupBy {
		keys[i] = g.String()
	}
	aggs := make([]string, len(a.Aggs))
	for i, c := range a.Aggs {
		aggs[i] = c.String()
	}
	uid := ""
	if a.UID != "" {
		uid = fmt.Sprintf(" uid=%q", a.UID)
	}
	return fmt.Sprintf("Aggregate group=[%s] aggs=[%s]%s", strings.Join(keys, ", "), strings.Join(aggs, ", "), uid)
}

// SortKey is one ORDER BY item. NULLs sort as larger than any value, so
// NullsFirst defaults to Desc.
type SortKey struct {
	Expr       expr.Expr
	Desc       bool
	NullsFirst bool
}

// Sort orders its input.
type Sort struct {
	Input Node
	Keys  []SortKey
}

func (s *Sort) Schema() []types.Column { return s.Input.Schema() }
func (s *Sort) Children() []Node       { return []Node{s.Input} }
func (s *Sort) Describe() string {
	parts := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		parts[i] = k.Expr.String()
		if k.Desc {
			parts[i] += " DESC"
		}
	}
	return "Sort " + strings.Join(parts, ", ")
}

// Limit skips Offset rows and returns at most Count (-1: all). With
// WithTies (FETCH ... WITH TIES) its Input is a Sort and it also returns
// the rows after the Count-th that are equal to it in the Sort's keys.
type Limit struct {
	Input    Node
	Count    int64
	Offset   int64
	WithTies bool
	// CountExpr and OffsetExpr, when set, are the LIMIT and OFFSET of an
	// ad-hoc query known only when it runs (a parameter, a subquery):
	// Count and Offset are read from them then (sql's resolveLimits),
	// and a plan with either still set does not run.
	CountExpr, OffsetExpr expr.Expr
}

func (l *Limit) Schema() []types.Column { return l.Input.Schema() }
func (l *Limit) Children() []Node       { return []Node{l.Input} }
func (l *Limit) Describe() string {
	if l.CountExpr != nil || l.OffsetExpr != nil {
		show := func(e expr.Expr, n int64) string {
			if e != nil {
				return "(" + e.String() + ")"
			}
			return fmt.Sprint(n)
		}
		return fmt.Sprintf("Limit %s offset %s", show(l.CountExpr, l.Count), show(l.OffsetExpr, l.Offset))
	}
	if l.WithTies {
		return fmt.Sprintf("Limit %d offset %d with ties", l.Count, l.Offset)
	}
	return fmt.Sprintf("Limit %d offset %d", l.Count, l.Offset)
}

// Explain renders the tree, one node per line, children indented.
func Explain(n Node) string { return ExplainAs(n, func(n Node) Node { return n }) }

// ExplainAs is Explain where shown says what stands at each node's place:
// the node itself, or another node (e.g. what the node runs as) that is
// rendered at the same depth in its stead.
func ExplainAs(n Node, shown func(Node) Node) string {
	var sb strings.Builder
	var walk func(n Node, depth int)
	walk = func(n Node, depth int) {
		if m := shown(n); m != n {
			walk(m, depth)
			return
		}
		sb.WriteString(strings.Repeat("  ", depth))
		if depth > 0 {
			sb.WriteString("└─ ")
		}
		sb.WriteString(n.Describe())
		sb.WriteString("\n")
		for _, c := range n.Children() {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return sb.String()
}

// AppendOnly reports whether n only ever emits insertions when run as a
// stream (so that min/max need no multiset and views need no row counts).
func AppendOnly(n Node) bool { return appendOnly(n, false) }

// AppendOnlyJoins is AppendOnly that also counts an inner join of
// append-only inputs (it emits an insert per match of an inserted row and
// nothing else). Which of the two a view uses is part of its state's
// format (see exec's dataflow layouts).
func AppendOnlyJoins(n Node) bool { return appendOnly(n, true) }

func appendOnly(n Node, innerJoins bool) bool {
	switch n := n.(type) {
	case *Scan:
		return n.Object.Kind == catalog.KindStream
	case *Filter, *Project, *Window:
		return appendOnly(n.Children()[0], innerJoins)
	case *Join:
		return innerJoins && n.Kind == InnerJoin && appendOnly(n.Left, innerJoins) && appendOnly(n.Right, innerJoins)
	case *Union:
		for _, in := range n.Inputs {
			if !appendOnly(in, innerJoins) {
				return false
			}
		}
		return true
	}
	return false
}

// Sources returns the catalog objects that n scans.
func Sources(n Node) []*catalog.Descriptor {
	var out []*catalog.Descriptor
	for _, s := range Scans(n) {
		out = append(out, s.Object)
	}
	return out
}

// Scans returns the scans in n, in a depth-first walk.
func Scans(n Node) []*Scan {
	var out []*Scan
	var walk func(Node)
	walk = func(n Node) {
		if s, ok := n.(*Scan); ok {
			out = append(out, s)
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(n)
	return out
}

// Union concatenates its inputs (UNION ALL); all have the schema Cols.
type Union struct {
	Inputs []Node
	Cols   []types.Column
}

func (u *Union) Schema() []types.Column { return u.Cols }
func (u *Union) Children() []Node       { return u.Inputs }
func (u *Union) Describe() string       { return fmt.Sprintf("Union all (%d inputs)", len(u.Inputs)) }

// JoinKind is the kind of a join.
type JoinKind string

const (
	InnerJoin JoinKind = "inner"
	LeftJoin  JoinKind = "left"
	RightJoin JoinKind = "right"
	FullJoin  JoinKind = "full"
)

// Join combines two inputs. Rows match when LeftKeys equal RightKeys
// (SQL equality: NULL never matches) and Cond, evaluated over the
// concatenated row, is true. Outer kinds add unmatched rows padded with
// NULLs. The output is the left columns followed by the right ones.
type Join struct {
	Kind      JoinKind
	Left      Node
	Right     Node
	LeftKeys  []expr.Expr // over the left row
	RightKeys []expr.Expr // over the right row
	Cond      expr.Expr   // over the concatenated row; nil means true
	Cols      []types.Column
	// Note, when set, says in EXPLAIN what the join stands for: the
	// semi or anti join, or the subquery aggregate, that a view's
	// subquery was rewritten into. It does not change what the join does.
	Note string
}

func (j *Join) Schema() []types.Column { return j.Cols }
func (j *Join) Children() []Node       { return []Node{j.Left, j.Right} }
func (j *Join) Describe() string {
	keys := make([]string, len(j.LeftKeys))
	for i := range j.LeftKeys {
		keys[i] = j.LeftKeys[i].String() + " = " + j.RightKeys[i].String()
	}
	s := fmt.Sprintf("Join %s on [%s]", j.Kind, strings.Join(keys, ", "))
	if j.Cond != nil {
		s += " filter " + j.Cond.String()
	}
	if j.Note != "" {
		s = j.Note + ": " + s
	}
	return s
}

// Window assigns each input row to event-time windows (TUMBLE: one window
// of Size; HOP: every window of Size starting at a multiple of Slide that
// contains the row), adding window_start and window_end columns. A row with
// a NULL time is in no window.
type Window struct {
	Input   Node
	TimeCol int
	Size    int64 // microseconds, in (0, MaxWindowMicros]
	Slide   int64 // microseconds, in (0, MaxWindowMicros]; equal to Size for TUMBLE
	Cols    []types.Column
}

// MaxWindowMicros bounds window sizes and slides to half the timestamp
// range (about 149,000 years), so that window arithmetic on finite
// timestamps never overflows int64.
const MaxWindowMicros = types.EndTimestampMicros/2 - types.MinTimestampMicros/2

func (w *Window) Schema() []types.Column { return w.Cols }
func (w *Window) Children() []Node       { return []Node{w.Input} }
func (w *Window) Describe() string {
	if w.Slide == w.Size {
		return fmt.Sprintf("Tumble %s size=%dus", w.Input.Schema()[w.TimeCol].Name, w.Size)
	}
	return fmt.Sprintf("Hop %s size=%dus slide=%dus", w.Input.Schema()[w.TimeCol].Name, w.Size, w.Slide)
}
