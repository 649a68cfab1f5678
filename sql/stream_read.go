package sql

import (
	"context"
	"errors"
	"slices"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// An ad-hoc query over a stream (SELECT * FROM s LIMIT 10, a tool's
// preview) reads what JetStream holds on the stream's subject now: from
// its first message to the last sequence when the query starts, decoded
// with the stream's columns as views decode them (a message that does not
// decode is skipped, as views skip it). A scan under a LIMIT with no ORDER
// BY or filter in between stops once it has the rows the LIMIT keeps;
// otherwise it reads the whole subject. The rows read are bounded by
// query_max_memory: past it the query fails with 53200.

// errStreamReadDone stops a stream read that has the rows it needs.
var errStreamReadDone = errors.New("stream read done")

// readStreams replaces each stream scan of root by one whose rows are the
// messages the stream holds.
func (s *session) readStreams(ctx context.Context, root plan.Node) (plan.Node, error) {
	if !hasStreamScan(root) {
		return root, nil
	}
	caps := map[*plan.Scan]int64{}
	streamScanCaps(root, caps)
	limit, _ := parseMemory(s.settings["query_max_memory"])
	return binder.MapPlanNodes(root, nil, func(n plan.Node) (plan.Node, bool, error) {
		sc, ok := n.(*plan.Scan)
		if !ok || sc.Rows != nil || sc.Object.Kind != catalog.KindStream {
			return n, false, nil
		}
		want, capped := caps[sc]
		if !capped {
			want = -1
		}
		rows, err := s.e.readStream(ctx, sc, want, limit)
		if err != nil {
			return nil, true, err
		}
		out := *sc
		out.Rows = func() []types.Row { return rows }
		return &out, true, nil
	})
}

func hasStreamScan(n plan.Node) bool {
	for _, sc := range plan.Scans(n) {
		if sc.Object.Kind == catalog.KindStream && sc.Rows == nil {
			return true
		}
	}
	return false
}

// streamScanCaps records, for each stream scan that only a LIMIT (through
// projections) reads, how many of its rows the LIMIT can use.
func streamScanCaps(n plan.Node, caps map[*plan.Scan]int64) {
	if l, ok := n.(*plan.Limit); ok && l.Count >= 0 {
		in := l.Input
		for {
			p, ok := in.(*plan.Project)
			if !ok {
				break
			}
			in = p.Input
		}
		if sc, ok := in.(*plan.Scan); ok {
			caps[sc] = l.Count + l.Offset
		}
	}
	for _, c := range n.Children() {
		streamScanCaps(c, caps)
	}
}

// readStream reads up to max rows (all when max < 0) of the stream that sc
// scans, within memLimit estimated bytes (0 or less: unbounded).
func (e *Engine) readStream(ctx context.Context, sc *plan.Scan, max int64, memLimit int64) ([]types.Row, error) {
	if max == 0 {
		return nil, nil
	}
	d := sc.Object
	first, err := e.streams.First(ctx, d)
	if err != nil {
		return nil, streamReadError(d.Name, err)
	}
	last, err := e.streams.Last(ctx, d)
	if err != nil {
		return nil, streamReadError(d.Name, err)
	}
	if first == 0 || last < first {
		return nil, nil
	}
	mcols, missing, err := exec.MessageColumns(sc)
	if err != nil {
		return nil, err
	}
	dec := exec.NewMessageDecoder(mcols, missing).WithMetadata(d)
	dec.SetGenerated(sc.Generated)
	w := &boundedRows{limit: memLimit, what: "stream " + d.Name}
	var decoded uint64
	var noColumn []byte // the first message that names no column
	err = e.streams.ReadInfo(ctx, d, first, last, func(m *meta.MessageInfo, data []byte) error {
		before := dec.NoColumn()
		row, err := dec.Decode(data)
		if err != nil {
			return nil // as a view's reader, skip what does not decode
		}
		dec.FillMetadata(row, m)
		decoded++
		if noColumn == nil && dec.NoColumn() > before {
			noColumn = slices.Clone(data)
		}
		if err := w.WriteRow(row); err != nil {
			return err
		}
		if max > 0 && int64(len(w.rows)) >= max {
			return errStreamReadDone
		}
		return nil
	})
	switch {
	case errors.Is(err, errStreamReadDone):
	case ctx.Err() != nil:
		return nil, sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	case err != nil:
		var se *sqlerr.Error
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, streamReadError(d.Name, err)
	}
	noColumnNotice(ctx, d.Name, sc.Cols, dec.NoColumn(), decoded, false, noColumn)
	return w.rows, nil
}

func streamReadError(name string, err error) error {
	return sqlerr.New(sqlerr.InternalError, "could not read stream %s from JetStream: %v", name, err)
}
