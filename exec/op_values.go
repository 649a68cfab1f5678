package exec

import (
	"context"

	"streamdb/plan"
	"streamdb/types"
)

// A view's VALUES (SELECT 1, a VALUES list, a branch of a UNION ALL over
// constants) holds its rows from the view's creation on: valuesOp sends
// them once, before its first barrier, and records in its state table
// that it did, so that a restart does not send them again. An ALTER
// keeps that record when the VALUES is the same (operator id) and, if no
// kept operator above it holds its rows, sends them again (re-emit, as a
// kept aggregate does); a backfill deletes the record and they are sent
// again. A view with no other input gets its barriers from the
// runtime's clock (pipeline.clock).

// valuesOp is the head of a VALUES branch of a view's dataflow.
type valuesOp struct {
	rows [][]types.Datum
	next Operator
	key  []byte // its state: present once the rows were sent
	sent bool
}

func (op *valuesOp) Push(*Chunk) error { return nil } // it has no input

func (op *valuesOp) Barrier(e Epoch) error {
	if !op.sent {
		c := &Chunk{}
		for _, r := range op.rows {
			c.Append(append(types.Row(nil), r...), Insert)
		}
		if c.Len() > 0 {
			if err := op.next.Push(c); err != nil {
				return err
			}
		}
		if err := e.Batch.Set(op.key, nil, nil); err != nil {
			return err
		}
		op.sent = true
	}
	return op.next.Barrier(e)
}

// addValues builds the head of a VALUES branch feeding next. Its rows are
// constants (the binder folds them; a view's expressions are
// deterministic), evaluated now.
func (b *builder) addValues(n *plan.Values, next Operator) (Operator, error) {
	key, err := b.opPrefix()
	if err != nil {
		return nil, err
	}
	op := &valuesOp{next: next, key: key}
	for _, r := range n.Rows {
		row := make([]types.Datum, len(r))
		for i, e := range r {
			v, err := e.Eval(nil)
			if err != nil {
				return nil, err
			}
			row[i] = v
		}
		op.rows = append(op.rows, row)
	}
	_, found, err := b.rt.store.Get(op.key)
	if err != nil {
		return nil, err
	}
	// A kept VALUES that nothing kept above holds sends its rows again
	// after an ALTER (alter.go).
	op.sent = found && !b.reemit[b.lastOp]
	if !op.sent {
		b.valuesPending = true
	}
	b.p.constHeads = append(b.p.constHeads, op)
	return op, nil
}

// runClock sends the barriers the runtime injects for a pipeline without
// inputs to its loop as input 0's, until ctx ends.
func (p *pipeline) runClock(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-p.clock:
			select {
			case p.in <- pipelineMsg{barrier: e}:
			case <-ctx.Done():
				return
			}
		}
	}
}
