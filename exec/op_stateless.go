package exec

import (
	"streamdb/expr"
	"streamdb/types"
)

// filterOp keeps the changes whose row satisfies cond. Deletes pass the same
// test as the inserts they cancel, so retractions need nothing special.
type filterOp struct {
	cond expr.Expr
	next Operator
}

func (f *filterOp) Push(c *Chunk) error {
	out := &Chunk{}
	for i, row := range c.Rows {
		v, err := f.cond.Eval(row)
		if err != nil {
			return err
		}
		if !v.IsNull() && v.Bool() {
			out.Append(row, c.Signs[i])
		}
	}
	if out.Len() == 0 {
		return nil
	}
	return f.next.Push(out)
}

func (f *filterOp) Barrier(e Epoch) error { return f.next.Barrier(e) }

// projectOp computes output columns per change.
type projectOp struct {
	exprs []expr.Expr
	next  Operator
}

func (p *projectOp) Push(c *Chunk) error {
	out := &Chunk{Rows: make([]types.Row, len(c.Rows)), Signs: c.Signs}
	for i, row := range c.Rows {
		r, err := evalRow(p.exprs, row)
		if err != nil {
			return err
		}
		out.Rows[i] = r
	}
	return p.next.Push(out)
}

func (p *projectOp) Barrier(e Epoch) error { return p.next.Barrier(e) }

func evalRow(exprs []expr.Expr, row types.Row) (types.Row, error) {
	out := make(types.Row, len(exprs))
	for j, e := range exprs {
		v, err := e.Eval(row)
		if err != nil {
			return nil, err
		}
		out[j] = v
	}
	return out, nil
}

// unionOp merges the changes of several inputs (UNION ALL). Each input
// forwards the barrier; the union passes it on once all have.
type unionOp struct {
	inputs int
	seen   int
	next   Operator
}

func (u *unionOp) Push(c *Chunk) error { return u.next.Push(c) }

func (u *unionOp) Barrier(e Epoch) error {
	u.seen++
	if u.seen < u.inputs {
		return nil
	}
	u.seen = 0
	return u.next.Barrier(e)
}
