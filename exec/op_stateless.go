package exec

import (
	"fmt"
	"slices"

	"streamdb/expr"
	"streamdb/types"
)

// filterOp keeps the changes whose row satisfies cond. Deletes pass the same
// test as the inserts they cancel, so retractions need nothing special.
//
// A row that passes is passed on as is (no copy) when most rows pass. When
// few do, the survivors are copied into one fresh backing array, so that an
// operator downstream that keeps them (a join) does not pin the whole
// array of the input chunk for a handful of rows.
type filterOp struct {
	cond expr.Expr
	next Operator
	keep []int32 // scratch: indexes of passing rows
	// errs records rows whose condition fails to evaluate, which are
	// skipped (see viewErrors); nil stops the view on such a row.
	errs *viewErrors
}

func (f *filterOp) Push(c *Chunk) error {
	f.keep = f.keep[:0]
	for i, row := range c.Rows {
		v, err := f.cond.Eval(row)
		if err != nil {
			if err := f.errs.skip("filter", err); err != nil {
				return err
			}
			continue
		}
		if !v.IsNull() && v.Bool() {
			f.keep = append(f.keep, int32(i))
		}
	}
	n := len(f.keep)
	switch {
	case n == 0:
		return nil
	case n == c.Len():
		return f.next.Push(c)
	}
	out := &Chunk{Rows: make([]types.Row, 0, n), Signs: make([]int8, 0, n)}
	var slab []types.Datum
	if n*4 < c.Len() {
		width := 0
		for _, i := range f.keep {
			width += len(c.Rows[i])
		}
		slab = make([]types.Datum, 0, width)
	}
	for _, i := range f.keep {
		row := c.Rows[i]
		if slab != nil {
			start := len(slab)
			slab = append(slab, row...)
			row = slab[start:len(slab):len(slab)]
		}
		out.Append(row, c.Signs[i])
	}
	return f.next.Push(out)
}

func (f *filterOp) Barrier(e Epoch) error { return f.next.Barrier(e) }

// projectOp computes output columns per change. The output rows of a chunk
// share one backing array (one allocation per chunk, not per row). A
// projection that keeps a prefix of its input's columns in order (the
// identity included) re-slices the input rows instead: rows are never
// written once built, so sharing them is safe.
type projectOp struct {
	exprs []expr.Expr
	next  Operator
	// cols[j] is the input column expression j copies, or -1 when it
	// computes something; prefix reports cols[j] == j for every j.
	cols   []int
	prefix bool
	// reuse: next only borrows rows (see borrowsRows), so every Push
	// builds its rows in buf and its chunk in out again.
	reuse bool
	buf   []types.Datum
	out   Chunk
	// errs records rows an expression fails on, which are skipped (see
	// viewErrors); nil stops the view on such a row.
	errs *viewErrors
}

func (p *projectOp) init() {
	p.reuse = borrowsRows(p.next)
	p.cols = make([]int, len(p.exprs))
	p.prefix = true
	for j, e := range p.exprs {
		p.cols[j] = -1
		if c, ok := e.(*expr.ColRef); ok {
			p.cols[j] = c.Idx
		}
		if p.cols[j] != j {
			p.prefix = false
		}
	}
}

func (p *projectOp) Push(c *Chunk) error {
	if p.cols == nil {
		p.init()
	}
	w := len(p.exprs)
	if p.prefix {
		out := &Chunk{Rows: make([]types.Row, len(c.Rows)), Signs: c.Signs}
		for i, row := range c.Rows {
			if len(row) < w {
				return fmt.Errorf("internal error: projection of %d columns over a row of %d", w, len(row))
			}
			out.Rows[i] = row[:w:w]
		}
		return p.next.Push(out)
	}
	out, slab := p.output(len(c.Rows), w)
	out.Signs = c.Signs
	// n counts the rows kept; once a row is skipped, signs holds the
	// signs of the kept rows.
	n := 0
	var signs []int8
rows:
	for i, row := range c.Rows {
		r := slab[n*w : (n+1)*w : (n+1)*w]
		for j, e := range p.exprs {
			if k := p.cols[j]; k >= 0 {
				r[j] = row[k]
				continue
			}
			v, err := e.Eval(row)
			if err != nil {
				if err := p.errs.skip("projection", err); err != nil {
					return err
				}
				if signs == nil {
					signs = append(make([]int8, 0, len(c.Rows)), c.Signs[:i]...)
				}
				continue rows
			}
			r[j] = v
		}
		out.Rows[n] = r
		if signs != nil {
			signs = append(signs, c.Signs[i])
		}
		n++
	}
	if signs != nil {
		out.Rows, out.Signs = out.Rows[:n], signs
		if n == 0 {
			return nil
		}
	}
	return p.next.Push(out)
}

// output returns a chunk of n rows and datum storage for them, of width w:
// the reused ones when next only borrows rows, else new ones.
func (p *projectOp) output(n, w int) (*Chunk, []types.Datum) {
	if !p.reuse {
		return &Chunk{Rows: make([]types.Row, n)}, make([]types.Datum, n*w)
	}
	if cap(p.buf) < n*w {
		p.buf = make([]types.Datum, n*w)
	}
	p.out.Rows = slices.Grow(p.out.Rows[:0], n)[:n]
	return &p.out, p.buf[:n*w]
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
