package exec

// Operators that only borrow the rows pushed to them let the operators
// before them reuse their output storage.

// borrowsRows reports whether op reads the rows pushed to it only during
// Push: an aggregate copies group keys and argument values, a projection
// copies the columns it keeps (unless it passes prefixes of the input rows
// on), a window copies each row into its windowed rows, a join copies the
// rows it keeps and builds its output rows, and a filter or a tee borrows
// when what it passes rows to does.
func borrowsRows(op Operator) bool {
	switch op := op.(type) {
	case *aggOp, *windowOp, *joinPort:
		return true
	case *filterOp:
		return borrowsRows(op.next)
	case *countingOp:
		return borrowsRows(op.next)
	case *projectOp:
		if op.cols == nil {
			op.init()
		}
		return !op.prefix || borrowsRows(op.next)
	case *teeOp:
		for _, o := range op.outputs {
			if !borrowsRows(o) {
				return false
			}
		}
		return true
	}
	return false
}

// outputChunk gives an operator that builds new rows the chunk for them.
// When the operators after it only read rows while Push runs (see
// borrowsRows), it is one chunk whose storage every use carves again;
// otherwise a new one each time. It decides at the first use: a tee's
// outputs are wired after the operators before it are made.
type outputChunk struct {
	decided bool
	reuse   bool // next does not keep rows past Push
	c       Chunk
}

// get returns an empty chunk for rows to be pushed to next.
func (o *outputChunk) get(next Operator) *Chunk {
	if !o.decided {
		o.reuse, o.decided = borrowsRows(next), true
	}
	if !o.reuse {
		return &Chunk{}
	}
	o.c.recycle()
	return &o.c
}
