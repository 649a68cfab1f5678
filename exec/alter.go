package exec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/storage"
	"streamdb/storage/keyenc"
	"streamdb/types"
)

// ALTER MATERIALIZED VIEW swaps a view's plan while the server stops at an
// epoch boundary (package sql, alter_view.go). The view keeps its object
// id, its source positions and the state tables of the operators that
// match (same operator id and state format); its table of rows is emptied.
// The swap leaves an alter marker in the view's meta table, which the
// first epoch of the new dataflow consumes:
//
//   - the materialize operator sends the view's old rows, saved under
//     the marker, as deletes to the views that read this one, before any
//     other change;
//   - each kept aggregate whose output nothing kept above it holds
//     (Reemit) sends its groups' committed output rows as inserts, so the
//     new plan's operators above it and the view's table are rebuilt
//     from the kept state;
//   - a view backfilled from its start (all its state deleted, its
//     stream positions moved back) reads the views and tables it reads
//     through edges again (Reread): each edge first sends its upstream's
//     rows at the epoch the dataflows resume from, as an edge attached
//     to a running upstream does.
//
// Together readers see the change as a changelog: the old rows retracted,
// the new ones inserted, in one epoch.

// OpSlot is a stateful operator of a view's dataflow: its node in the
// streaming plan, its operator id (StateSlot) and the indexes of the
// state tables it uses.
type OpSlot struct {
	Node    plan.Node
	ID      string
	Indexes []uint16
}

// ViewLayout is how a running view's dataflow is laid out: its streaming
// plan, its stateful operators, and the objects its sources read, in
// source order.
type ViewLayout struct {
	Root     plan.Node
	Slots    []OpSlot
	Sources  []string
	NextOp   uint16
	Dataflow catalog.FormatVersion
}

// Layout returns the layout of view id's running dataflow.
func (rt *Runtime) Layout(id uint32) (*ViewLayout, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	p := rt.pipelines[id]
	if p == nil || p.layout == nil {
		return nil, false
	}
	return p.layout, true
}

// CanReemit reports whether a kept operator can send its state downstream
// (aggregates can, and VALUES sends its rows again; joins and top-N
// cannot yet).
func CanReemit(n plan.Node) bool {
	switch n.(type) {
	case *plan.Aggregate, *plan.Values:
		return true
	}
	return false
}

// StateFormat is a string equal for two operators whose state tables read
// alike: the kind of operator, the types of its key and of its state.
// Operators with the same id normally have it equal; operators named by
// the user (plan.Aggregate.UID) may not, and then do not keep state.
func StateFormat(dataflow catalog.FormatVersion, n plan.Node) string {
	switch x := n.(type) {
	case *plan.Aggregate:
		s := fmt.Sprintf("aggregate append_only=%v keys=", appendOnly(x.Input))
		for _, g := range x.GroupBy {
			s += g.Type().String() + ","
		}
		s += " aggs="
		for _, a := range x.Aggs {
			arg := ""
			if a.Arg != nil {
				arg = a.Arg.Type().String()
			}
			s += fmt.Sprintf("%s(%v %s):%s,", a.Func, a.Distinct, arg, a.T)
		}
		return s
	}
	var kinds []string
	for _, c := range n.Schema() {
		kinds = append(kinds, c.Type.String())
	}
	return fmt.Sprintf("%T %v", n, kinds)
}

// alterMarkerKey holds, in view id's meta table, what the first epoch
// after an ALTER must do (see above); the rows to retract follow it.
func alterMarkerKey(id uint32) []byte {
	return append(storage.StatePrefix(id, viewMetaIndex), "alter"...)
}

func alterRetractPrefix(id uint32) []byte {
	return append(storage.StatePrefix(id, viewMetaIndex), "alter/r/"...)
}

type alterMarker struct {
	Reemit []uint16 `json:"reemit,omitempty"`
	Cols   int      `json:"cols"`
	// Reread is set when the view was emptied to be backfilled: the
	// views and tables it reads through edges send it their rows again.
	Reread bool `json:"reread,omitempty"`
}

// SwapViewState rewrites, in b, the state of view id for its new plan: the
// state tables in drop are deleted, the view's rows are moved under the
// alter marker (to be retracted downstream), and the marker records the
// state tables whose operators re-send their output, and, for a view
// backfilled from its start (reread), that its edges send their
// upstreams' rows again.
func SwapViewState(store *storage.Store, b *pebble.Batch, id uint32, oldCols int, drop, reemit []uint16, reread bool) error {
	for _, idx := range drop {
		p := storage.StatePrefix(id, idx)
		if err := b.DeleteRange(p, storage.PrefixEnd(p), nil); err != nil {
			return err
		}
	}
	rp := alterRetractPrefix(id)
	if err := b.DeleteRange(rp, storage.PrefixEnd(rp), nil); err != nil {
		return err
	}
	table := ViewTablePrefix(id)
	n := uint64(0)
	err := storage.ScanPrefix(store.DB(), table, func(k, v []byte) error {
		n++
		return b.Set(binary.BigEndian.AppendUint64(append([]byte(nil), rp...), n), v, nil)
	})
	if err != nil {
		return err
	}
	if err := b.DeleteRange(table, storage.PrefixEnd(table), nil); err != nil {
		return err
	}
	data, _ := json.Marshal(alterMarker{Reemit: reemit, Cols: oldCols, Reread: reread})
	return b.Set(alterMarkerKey(id), data, nil)
}

// readAlterMarker returns the alter marker of view id, if it has one, with
// the rows to retract.
func readAlterMarker(store *storage.Store, id uint32) (*alterMarker, []types.Row, error) {
	v, ok, err := store.Get(alterMarkerKey(id))
	if err != nil || !ok {
		return nil, nil, err
	}
	var m alterMarker
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, nil, fmt.Errorf("alter marker of view %d: %w", id, err)
	}
	var rows []types.Row
	err = storage.ScanPrefix(store.DB(), alterRetractPrefix(id), func(_, v []byte) error {
		row, count, err := DecodeViewValue(v, m.Cols)
		if err != nil {
			return err
		}
		for range count {
			rows = append(rows, row)
		}
		return nil
	})
	return &m, rows, err
}

// clearAlterMarker deletes the marker of view id and its rows in b.
func clearAlterMarker(b *pebble.Batch, id uint32) error {
	if err := b.Delete(alterMarkerKey(id), nil); err != nil {
		return err
	}
	rp := alterRetractPrefix(id)
	return b.DeleteRange(rp, storage.PrefixEnd(rp), nil)
}

// reemitAll appends to out, as inserts, the committed output row of every
// group in the aggregate's state table (see above).
func (op *aggOp) reemitAll(out *Chunk) error {
	width := len(op.groupBy) + len(op.calls)
	skip := len(op.prefix) + vnodeSkip(op.vnodes)
	return storage.ScanPrefix(op.store.DB(), op.prefix, func(k, v []byte) error {
		ks := string(k[skip:])
		if g, ok := op.groups[ks]; ok {
			if g.emitted {
				row, _, err := keyenc.DecodeRow(g.prev, width)
				if err != nil {
					return fmt.Errorf("aggregate output: %w", err)
				}
				out.Append(row, Insert)
			}
			return nil
		}
		key, _, err := keyenc.DecodeRow(k[skip:], len(op.groupBy))
		if err != nil {
			return err
		}
		g, err := op.decodeGroup(key, v)
		if err != nil {
			return err
		}
		if cur := op.output(g); cur != nil {
			out.Append(cur, Insert)
		}
		return nil
	})
}

// alterState sets up the builder of a view altered and not yet started
// again: what its first epoch re-sends.
func (b *builder) alterState(desc *catalog.Descriptor, mat *materializeOp) error {
	m, rows, err := readAlterMarker(b.rt.store, desc.ID)
	if err != nil || m == nil {
		return err
	}
	b.reemit = map[uint16]bool{}
	for _, idx := range m.Reemit {
		b.reemit[idx] = true
	}
	mat.altered, mat.retract = true, rows
	b.p.reread = m.Reread
	mat.alterEpoch.Store(math.MaxUint64)
	return nil
}

// layout is the layout of the dataflow b built from root; nextOp is the
// view's first unused table index.
func (b *builder) layout(root plan.Node, nextOp uint16) *ViewLayout {
	l := &ViewLayout{Root: root, Slots: b.slots, NextOp: max(nextOp, firstOperatorIndex), Dataflow: b.dataflow}
	for _, s := range b.p.sources {
		l.Sources = append(l.Sources, s.name)
	}
	return l
}

// flushRetract sends the old rows of an altered view downstream as deletes
// once, before anything else of its first epoch.
func (op *materializeOp) flushRetract() {
	rows := op.retract
	op.retract = nil
	if len(rows) == 0 || op.hub == nil || !op.hub.readers() {
		return
	}
	c := &Chunk{}
	for _, r := range rows {
		c.Append(r, Delete)
	}
	op.hub.forward(c)
}

// viewIDOf is the view id of a state key of it (storage.StatePrefix).
func viewIDOf(key []byte) uint32 { return binary.BigEndian.Uint32(key[1:5]) }
