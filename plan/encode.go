package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Plan records: a view's bound plan, stored in its catalog descriptor when
// the view is created, so that the view's dataflow is built from the plan
// it was created with rather than from its SQL bound again by whatever
// binder runs later (whose rewrites could reorder operators and attach
// stored state to the wrong one). The record is JSON: nodes with their
// inputs, expressions as trees of column references, constants and calls
// (a call is rebuilt by expr.Rebuild from its name, arguments and type),
// and catalog objects by name. Each node carries a stable operator id.
//
// The versions of the record, oldest first. Decode reads the versions
// from RecordMinSupported to RecordLatest and refuses any other.
const (
	// RecordV1 holds the nodes and expressions as the binder made them,
	// a node met twice (a shared subtree) once and then by reference.
	RecordV1 = 1

	RecordLatest       = RecordV1
	RecordMinSupported = RecordV1
)

// record is a plan record.
type record struct {
	Version int      `json:"version"`
	Root    *nodeRec `json:"root"`
}

// nodeRec is one plan node; which fields are set depends on Op.
type nodeRec struct {
	Op string `json:"op,omitempty"`
	// ID is the node's stable operator id (see operatorID); base is the
	// id before a suffix made it unique, which the ids above it derive
	// from.
	ID   string `json:"id,omitempty"`
	base string
	// Ref, when set, says this is the node recorded at that position in
	// the record's depth-first order (inputs after their node).
	Ref  *int       `json:"ref,omitempty"`
	In   []*nodeRec `json:"in,omitempty"`
	Cols []colRec   `json:"cols,omitempty"`

	Object     string        `json:"object,omitempty"` // scan
	ObjectKind string        `json:"object_kind,omitempty"`
	Watermark  *watermarkRc  `json:"watermark,omitempty"`
	StoredKey  []int         `json:"stored_key,omitempty"`
	MemberKeys []string      `json:"member_keys,omitempty"`
	Generated  []generatedRc `json:"generated,omitempty"`

	Rows  [][]*exprRec `json:"rows,omitempty"`  // values
	Cond  *exprRec     `json:"cond,omitempty"`  // filter, join
	Exprs []*exprRec   `json:"exprs,omitempty"` // project

	GroupBy []*exprRec `json:"group_by,omitempty"` // aggregate
	Aggs    []aggRec   `json:"aggs,omitempty"`
	UID     string     `json:"uid,omitempty"`

	Keys        []sortKeyRec `json:"keys,omitempty"` // sort; topn's order
	PartitionBy []*exprRec   `json:"partition_by,omitempty"`
	Func        string       `json:"func,omitempty"`
	RankName    string       `json:"rank_name,omitempty"`
	Count       int64        `json:"count,omitempty"` // limit, topn
	Offset      int64        `json:"offset,omitempty"`
	WithTies    bool         `json:"with_ties,omitempty"` // limit, topn

	JoinKind  JoinKind   `json:"join_kind,omitempty"`
	LeftKeys  []*exprRec `json:"left_keys,omitempty"`
	RightKeys []*exprRec `json:"right_keys,omitempty"`
	Note      string     `json:"note,omitempty"`

	TimeCol int   `json:"time_col,omitempty"` // window
	Size    int64 `json:"size,omitempty"`
	Slide   int64 `json:"slide,omitempty"`
}

type colRec struct {
	Name string          `json:"name"`
	Type string          `json:"type"`
	Mod  *types.Modifier `json:"mod,omitempty"`
}

type generatedRc struct {
	Col  int      `json:"col"`
	Expr *exprRec `json:"expr"`
}

type watermarkRc struct {
	Col  int      `json:"col"`
	Expr *exprRec `json:"expr"`
	Text string   `json:"text"`
}

type aggRec struct {
	Func     string   `json:"func"`
	Arg      *exprRec `json:"arg,omitempty"`
	Distinct bool     `json:"distinct,omitempty"`
	Type     string   `json:"type"`
}

type sortKeyRec struct {
	Expr       *exprRec `json:"expr"`
	Desc       bool     `json:"desc,omitempty"`
	NullsFirst bool     `json:"nulls_first,omitempty"`
}

// Encode returns the plan record of root, checked to read back (Decode)
// as the same plan; lookup finds the catalog objects root scans.
func Encode(root Node, lookup func(string) (*catalog.Descriptor, bool)) ([]byte, error) {
	e := newEncoder()
	rec, err := e.node(root)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(record{Version: RecordLatest, Root: rec})
	if err != nil {
		return nil, err
	}
	back, err := Decode(data, lookup)
	if err != nil {
		return nil, fmt.Errorf("the plan does not read back: %w", err)
	}
	again, err := encodeUnchecked(back)
	if err != nil || !bytes.Equal(again, data) {
		return nil, fmt.Errorf("the plan reads back as another plan (%v)", err)
	}
	if err := sameAs(reflect.ValueOf(root), reflect.ValueOf(back), "plan"); err != nil {
		return nil, fmt.Errorf("the plan reads back as another plan: %w", err)
	}
	return data, nil
}

func encodeUnchecked(root Node) ([]byte, error) {
	e := newEncoder()
	rec, err := e.node(root)
	if err != nil {
		return nil, err
	}
	return json.Marshal(record{Version: RecordLatest, Root: rec})
}

type encoder struct {
	seen  map[Node]int    // node -> its position in depth-first order
	bases map[Node]string // node -> its id before a suffix
	next  int             // the next position
	ids   map[string]int  // operator id -> times given
	// byNode is each node's operator id (NodeIDs).
	byNode map[Node]string
}

func newEncoder() *encoder {
	return &encoder{seen: map[Node]int{}, bases: map[Node]string{}, ids: map[string]int{}, byNode: map[Node]string{}}
}

func (e *encoder) node(n Node) (*nodeRec, error) {
	if at, ok := e.seen[n]; ok {
		return &nodeRec{Ref: &at, base: e.bases[n]}, nil
	}
	e.seen[n] = e.next
	e.next++
	r := &nodeRec{Cols: colRecs(n.Schema())}
	var err error
	exprs := func(es []expr.Expr) []*exprRec {
		out := make([]*exprRec, len(es))
		for i, x := range es {
			if err == nil {
				out[i], err = encodeExpr(x)
			}
		}
		return out
	}
	one := func(x expr.Expr) *exprRec {
		if x == nil || err != nil {
			return nil
		}
		var r *exprRec
		r, err = encodeExpr(x)
		return r
	}
	keys := func(ks []SortKey) []sortKeyRec {
		out := make([]sortKeyRec, len(ks))
		for i, k := range ks {
			out[i] = sortKeyRec{Expr: one(k.Expr), Desc: k.Desc, NullsFirst: k.NullsFirst}
		}
		return out
	}
	switch n := n.(type) {
	case *Scan:
		if n.Rows != nil || n.Object.Kind == catalog.KindSystem {
			return nil, fmt.Errorf("%s %s is not stored", n.Object.Kind, n.Object.Name)
		}
		r.Op, r.Object, r.ObjectKind, r.StoredKey = "scan", n.Object.Name, string(n.Object.Kind), n.StoredKey
		r.MemberKeys = n.Keys
		if w := n.Watermark; w != nil {
			r.Watermark = &watermarkRc{Col: w.Col, Expr: one(w.Expr), Text: w.Text}
		}
		for _, g := range n.Generated {
			r.Generated = append(r.Generated, generatedRc{Col: g.Col, Expr: one(g.Expr)})
		}
	case *Values:
		r.Op = "values"
		for _, row := range n.Rows {
			r.Rows = append(r.Rows, exprs(row))
		}
	case *Filter:
		r.Op, r.Cond = "filter", one(n.Cond)
	case *Project:
		r.Op, r.Exprs = "project", exprs(n.Exprs)
	case *Aggregate:
		r.Op, r.GroupBy, r.UID = "aggregate", exprs(n.GroupBy), n.UID
		for _, a := range n.Aggs {
			r.Aggs = append(r.Aggs, aggRec{Func: a.Func, Arg: one(a.Arg), Distinct: a.Distinct, Type: a.T.String()})
		}
	case *Sort:
		r.Op, r.Keys = "sort", keys(n.Keys)
	case *Limit:
		r.Op, r.Count, r.Offset, r.WithTies = "limit", n.Count, n.Offset, n.WithTies
	case *TopN:
		r.Op, r.PartitionBy, r.Keys = "topn", exprs(n.PartitionBy), keys(n.Order)
		r.Func, r.RankName, r.Count, r.Offset, r.WithTies = n.Func, n.RankName, n.Count, n.Offset, n.WithTies
	case *Union:
		r.Op = "union"
	case *Join:
		r.Op, r.JoinKind, r.LeftKeys, r.RightKeys, r.Cond, r.Note = "join", n.Kind, exprs(n.LeftKeys), exprs(n.RightKeys), one(n.Cond), n.Note
	case *Window:
		r.Op, r.TimeCol, r.Size, r.Slide = "window", n.TimeCol, n.Size, n.Slide
	default:
		return nil, fmt.Errorf("plan node %s cannot be recorded", n.Describe())
	}
	if err != nil {
		return nil, err
	}
	for _, c := range n.Children() {
		in, err := e.node(c)
		if err != nil {
			return nil, err
		}
		r.In = append(r.In, in)
	}
	r.ID = e.operatorID(r)
	e.bases[n] = r.base
	e.byNode[n] = r.ID
	return r, nil
}

// operatorID derives a node's id from its kind, its own fields and its
// inputs' ids, so that it stays the same under changes elsewhere in the
// plan (a column added to a projection above an aggregate keeps the
// aggregate's id). Equal subtrees derive equal ids; the second and later
// of an id in the record get a suffix (#2, #3, ...) to stay unique, which
// the ids above them do not derive from. A node the user named (UID) has
// the id kind:name.
func (e *encoder) operatorID(r *nodeRec) string {
	own := *r
	own.In, own.ID = nil, ""
	h := fnv.New64a()
	data, _ := json.Marshal(&own)
	h.Write(data)
	for _, in := range r.In {
		h.Write([]byte{0})
		h.Write([]byte(in.base))
	}
	r.base = fmt.Sprintf("%s-%08x", r.Op, uint32(h.Sum64()))
	if r.UID != "" {
		r.base = r.Op + ":" + r.UID // named by the user: nothing else counts
	}
	e.ids[r.base]++
	if k := e.ids[r.base]; k > 1 {
		return fmt.Sprintf("%s#%d", r.base, k)
	}
	return r.base
}

func colRecs(cols []types.Column) []colRec {
	out := make([]colRec, len(cols))
	for i, c := range cols {
		out[i] = colRec{Name: c.Name, Type: c.Type.String(), Mod: modRec(c.Mod)}
	}
	return out
}

func modRec(m types.Modifier) *types.Modifier {
	if m == (types.Modifier{}) {
		return nil
	}
	return &m
}

// Decode reads a plan record back into a plan; lookup finds the catalog
// objects it scans by name. A record of a version this binary does not
// read is refused with 0A000.
func Decode(data []byte, lookup func(string) (*catalog.Descriptor, bool)) (Node, error) {
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("plan record: %w", err)
	}
	if rec.Version < RecordMinSupported || rec.Version > RecordLatest {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "plan record version %d; this streamdb reads versions %d to %d",
			rec.Version, RecordMinSupported, RecordLatest).
			WithHint("Start the streamdb release that created the view, or a newer one.")
	}
	if rec.Root == nil {
		return nil, fmt.Errorf("plan record: no root")
	}
	d := &decoder{lookup: lookup}
	return d.node(rec.Root)
}

type decoder struct {
	lookup func(string) (*catalog.Descriptor, bool)
	nodes  []Node // by depth-first position
}

func (d *decoder) node(r *nodeRec) (Node, error) {
	if r.Ref != nil {
		if *r.Ref < 0 || *r.Ref >= len(d.nodes) || d.nodes[*r.Ref] == nil {
			return nil, fmt.Errorf("plan record: reference to node %d, not recorded before", *r.Ref)
		}
		return d.nodes[*r.Ref], nil
	}
	at := len(d.nodes)
	d.nodes = append(d.nodes, nil)
	var err error
	in := make([]Node, len(r.In))
	// The inputs are decoded after the node's place is taken, in the
	// order the encoder numbered them.
	for i, c := range r.In {
		if in[i], err = d.node(c); err != nil {
			return nil, err
		}
	}
	cols, err := decodeCols(r.Cols)
	if err != nil {
		return nil, err
	}
	exprs := func(rs []*exprRec) []expr.Expr {
		out := make([]expr.Expr, len(rs))
		for i, x := range rs {
			if err == nil {
				out[i], err = decodeExpr(x)
			}
		}
		return out
	}
	one := func(x *exprRec) expr.Expr {
		if x == nil || err != nil {
			return nil
		}
		var e expr.Expr
		e, err = decodeExpr(x)
		return e
	}
	keys := func(ks []sortKeyRec) []SortKey {
		out := make([]SortKey, len(ks))
		for i, k := range ks {
			out[i] = SortKey{Expr: one(k.Expr), Desc: k.Desc, NullsFirst: k.NullsFirst}
		}
		return out
	}
	input := func(want int) bool {
		if len(in) != want && err == nil {
			err = fmt.Errorf("plan record: %s node with %d inputs, want %d", r.Op, len(in), want)
		}
		return err == nil
	}
	var n Node
	switch r.Op {
	case "scan":
		obj, ok := d.lookup(r.Object)
		if !ok {
			return nil, fmt.Errorf("plan record: %s %s does not exist", r.ObjectKind, r.Object)
		}
		if string(obj.Kind) != r.ObjectKind {
			return nil, fmt.Errorf("plan record: %s is a %s, recorded as a %s", r.Object, obj.Kind, r.ObjectKind)
		}
		s := &Scan{Object: obj, Cols: cols, StoredKey: r.StoredKey, Keys: r.MemberKeys}
		if w := r.Watermark; w != nil {
			s.Watermark = &Watermark{Col: w.Col, Expr: one(w.Expr), Text: w.Text}
		}
		for _, g := range r.Generated {
			s.Generated = append(s.Generated, GeneratedColumn{Col: g.Col, Expr: one(g.Expr)})
		}
		n = s
	case "values":
		v := &Values{Cols: cols}
		for _, row := range r.Rows {
			v.Rows = append(v.Rows, exprs(row))
		}
		n = v
	case "filter":
		if input(1) {
			n = &Filter{Input: in[0], Cond: one(r.Cond)}
		}
	case "project":
		if input(1) {
			n = &Project{Input: in[0], Exprs: exprs(r.Exprs), Cols: cols}
		}
	case "aggregate":
		if input(1) {
			a := &Aggregate{Input: in[0], GroupBy: exprs(r.GroupBy), Cols: cols, UID: r.UID}
			for _, c := range r.Aggs {
				t, terr := typeByName(c.Type)
				if terr != nil && err == nil {
					err = terr
				}
				a.Aggs = append(a.Aggs, AggCall{Func: c.Func, Arg: one(c.Arg), Distinct: c.Distinct, T: t})
			}
			n = a
		}
	case "sort":
		if input(1) {
			n = &Sort{Input: in[0], Keys: keys(r.Keys)}
		}
	case "limit":
		if input(1) {
			n = &Limit{Input: in[0], Count: r.Count, Offset: r.Offset, WithTies: r.WithTies}
		}
	case "topn":
		if input(1) {
			n = &TopN{Input: in[0], PartitionBy: exprs(r.PartitionBy), Order: keys(r.Keys), Func: r.Func,
				RankName: r.RankName, Count: r.Count, Offset: r.Offset, WithTies: r.WithTies, Cols: cols}
		}
	case "union":
		n = &Union{Inputs: in, Cols: cols}
	case "join":
		if input(2) {
			n = &Join{Kind: r.JoinKind, Left: in[0], Right: in[1], LeftKeys: exprs(r.LeftKeys), RightKeys: exprs(r.RightKeys),
				Cond: one(r.Cond), Cols: cols, Note: r.Note}
		}
	case "window":
		if input(1) {
			n = &Window{Input: in[0], TimeCol: r.TimeCol, Size: r.Size, Slide: r.Slide, Cols: cols}
		}
	default:
		return nil, fmt.Errorf("plan record: unknown node %q", r.Op)
	}
	if err != nil {
		return nil, err
	}
	d.nodes[at] = n
	return n, nil
}

func decodeCols(rs []colRec) ([]types.Column, error) {
	out := make([]types.Column, len(rs))
	for i, c := range rs {
		t, err := typeByName(c.Type)
		if err != nil {
			return nil, err
		}
		out[i] = types.Column{Name: c.Name, Type: t}
		if c.Mod != nil {
			out[i].Mod = *c.Mod
		}
	}
	return out, nil
}

// typeByName is the type whose name (types.Type.String) is name.
func typeByName(name string) (types.Type, error) {
	if name == types.Unknown.String() {
		return types.Unknown, nil
	}
	t, err := types.Parse(name)
	if err != nil || t.String() != name {
		return 0, fmt.Errorf("plan record: unknown type %q", name)
	}
	return t, nil
}
