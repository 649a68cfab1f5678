package sql

import (
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/types"
)

// tableState is a table as one statement sees it (meta.TableState), with
// what the frontend's checks read of it at hand: the table, its columns
// and primary key (the state's), and the block's spill of the table that
// the state reads between its snapshot and its pending changes.
type tableState struct {
	*meta.TableState
	d     *catalog.Descriptor
	cols  []types.Column
	key   []int // primary key columns; nil for a table without one
	spill *tableSpill
}

func wrapTableState(st *meta.TableState) *tableState {
	return &tableState{TableState: st, d: st.Descriptor(), cols: st.Columns(), key: st.Key()}
}

// openTableState reads table d as of now through its log, whose lock the
// caller holds. Close it when done.
func (e *Engine) openTableState(d *catalog.Descriptor, log *meta.TableLog) (*tableState, error) {
	st, err := meta.OpenTableState(d, log)
	if err != nil {
		return nil, err
	}
	return wrapTableState(st), nil
}

// newTableState reads table d in snap (a transaction's) with pending
// applied on top.
func newTableState(d *catalog.Descriptor, snap *meta.Snapshot, pending []exec.Change) (*tableState, error) {
	st, err := meta.NewTableState(d, snap, pending)
	if err != nil {
		return nil, err
	}
	return wrapTableState(st), nil
}

// setSpill makes the state read the block's spill sp (nil for none).
func (ts *tableState) setSpill(sp *tableSpill) {
	ts.spill = sp
	if sp == nil {
		ts.SetSpill(nil)
		return
	}
	ts.SetSpill(spillReads{sp})
}

// rowKey is a row's identity in a table (meta.RowKey): its primary key
// in key encoding, or, without a primary key, the exact value encoding of
// the whole row.
func rowKey(key []int, r types.Row) []byte { return meta.RowKey(key, r) }

// spillReads is a block's spill as meta.TableState reads it.
type spillReads struct{ s *tableSpill }

func (r spillReads) Newest(identity []byte) (exec.Change, bool, error) { return r.s.newest(identity) }

func (r spillReads) Chain(identity []byte) ([]exec.Change, error) {
	chain, err := r.s.chain(identity)
	return spillChanges(nil, chain), err
}

func (r spillReads) EachIdentity(fn func(identity []byte, chain []exec.Change) error) error {
	var buf []exec.Change
	return r.s.eachIdentity(func(identity []byte, chain []spillChange) error {
		buf = spillChanges(buf[:0], chain)
		return fn(identity, buf)
	})
}

// spillChanges appends chain's changes to out.
func spillChanges(out []exec.Change, chain []spillChange) []exec.Change {
	for _, ch := range chain {
		out = append(out, ch.Change)
	}
	return out
}
