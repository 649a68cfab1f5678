package sql

import (
	"context"
	"fmt"
	"strconv"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// defaultSubscribeBuffer bounds, by default, the changes a subscriber may
// have committed but not yet read before it is cut off (54000): the views
// never wait for a subscriber.
const defaultSubscribeBuffer = 100000

// subscribeOptions are SUBSCRIBE's WITH options.
type subscribeOptions struct {
	snapshot, progress bool
	maxBuffered        int
}

func parseSubscribeOptions(opts map[string]string) (subscribeOptions, error) {
	o := subscribeOptions{snapshot: true, maxBuffered: defaultSubscribeBuffer}
	for k, v := range opts {
		switch k {
		case "snapshot", "progress":
			b, ok := parseBool(v)
			if !ok {
				return o, sqlerr.New(sqlerr.InvalidParameterValue, "SUBSCRIBE option %q requires a Boolean value, not %q", k, v)
			}
			if k == "snapshot" {
				o.snapshot = b == "on"
			} else {
				o.progress = b == "on"
			}
		case "max_buffered_rows":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return o, sqlerr.New(sqlerr.InvalidParameterValue, "SUBSCRIBE option \"max_buffered_rows\" must be a positive integer, not %q", v)
			}
			o.maxBuffered = n
		default:
			return o, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized SUBSCRIBE option %q", k).
				WithHint("The options are snapshot, progress and max_buffered_rows.")
		}
	}
	return o, nil
}

// feedView finds the materialized view a feed reads and checks that the
// session may read it.
func (s *session) feedView(what, name string) (*catalog.Descriptor, []types.Column, error) {
	d, ok := s.e.lookup(name)
	if !ok {
		return nil, nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	if d.Kind == catalog.KindUnpopulatedView {
		return nil, nil, binder.NotPopulated(d.Name)
	}
	if d.Kind != catalog.KindView {
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s reads materialized views; %s is a %s", what, d.Name, d.Kind).
			WithHint("CREATE MATERIALIZED VIEW over %s and use the view.", d.Name)
	}
	if !s.has(d, "SELECT") {
		return nil, nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", relKindWord(d), d.Name)
	}
	cols, err := d.Schema()
	return d, cols, err
}

// changeColumns are a feed's columns: epoch (SUBSCRIBE only), diff, then
// the view's.
func changeColumns(withEpoch bool, cols []types.Column) []types.Column {
	var out []types.Column
	if withEpoch {
		out = append(out, types.Column{Name: "epoch", Type: types.Int8})
	}
	out = append(out, types.Column{Name: "diff", Type: types.Int8})
	return append(out, cols...)
}

func (s *session) prepareSubscribe(n *front.Subscribe) (*prepared, error) {
	opts, err := parseSubscribeOptions(n.Options)
	if err != nil {
		return nil, err
	}
	d, cols, err := s.feedView("SUBSCRIBE", n.View)
	if err != nil {
		return nil, err
	}
	return &prepared{cols: changeColumns(true, cols), run: func(ctx context.Context, _ []types.Datum, w pgwire.RowWriter) (string, error) {
		if cur, ok := s.e.lookup(d.Name); !ok || cur.ID != d.ID {
			return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", d.Name)
		}
		f := &feed{w: w, ncols: len(cols), progress: opts.progress}
		return "", s.e.subscribe(ctx, d, len(cols), n.AsOf, opts, f)
	}}, nil
}

// psqlSubscribeNotice makes a plain SUBSCRIBE typed in psql say at once
// what psql will do with it: psql prints a result only when it is
// complete, so the feed's rows would show only once it ended, and Ctrl-C
// (a cancel, an error) discards them. COPY (SUBSCRIBE ...) TO STDOUT and
// a cursor, which psql prints as they come, say nothing.
func (s *session) psqlSubscribeNotice(st *front.Statement, p *prepared) *prepared {
	n, ok := st.Node.(*front.Subscribe)
	if !ok || p == nil || p.run == nil || s.settings["application_name"] != "psql" {
		return p
	}
	run := p.run
	p.run = func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		pgwire.Notice(ctx, "psql prints no row of SUBSCRIBE until it ends, and Ctrl-C discards the rows it has",
			fmt.Sprintf("To see each change as it comes, press Ctrl-C and run COPY (SUBSCRIBE %s) TO STDOUT instead; Ctrl-C ends that.", quoteIdent(n.View)))
		return run(ctx, vals, w)
	}
	return p
}

// subscribe streams view d's feed to f until ctx ends or the feed fails.
func (e *Engine) subscribe(ctx context.Context, d *catalog.Descriptor, ncols int, at *front.AsOf, opts subscribeOptions, f *feed) error {
	sub, err := e.openFeed(ctx, d, ncols, at, opts, f)
	if err != nil {
		return err
	}
	defer sub.Close()
	for {
		if err := pgwire.Flush(ctx); err != nil {
			return err
		}
		if err := pumpFeed(ctx, ctx, sub, f); err != nil {
			return err
		}
	}
}

// pumpFeed waits, under wait, for committed epochs and writes their
// changes to f under ctx: epochs taken are written whole.
func pumpFeed(wait, ctx context.Context, sub *exec.Subscription, f *feed) error {
	eps, err := sub.Next(wait)
	if err != nil {
		return err
	}
	for _, ep := range eps {
		if err := f.write(ctx, ep.Epoch, ep.Consolidate()); err != nil {
			return err
		}
	}
	return nil
}

// openFeed subscribes to view d and writes the feed's first rows to f:
// the rows at the start epoch (unless snapshot = false), or, AS OF a
// point, the point's rows and then the net change from the point to the
// start epoch. The caller closes the subscription.
func (e *Engine) openFeed(ctx context.Context, d *catalog.Descriptor, ncols int, at *front.AsOf, opts subscribeOptions, f *feed) (*exec.Subscription, error) {
	var point *asOfState
	if at != nil {
		m, err := e.resolveFeedPoint(at)
		if err != nil {
			return nil, err
		}
		if point, err = e.openPoint(m); err != nil {
			return nil, err
		}
		defer point.release()
		if pd, ok := point.lookup(d.Name); !ok || pd.ID != d.ID {
			return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %s did not exist at %s (epoch %d)", d.Name, meta.PointLabel(m), m.Epoch).
				WithHint("SUBSCRIBE without AS OF, or AS OF a point after the view was created.")
		}
	}
	sub, err := e.rt.Subscribe(d.ID, opts.maxBuffered)
	if err != nil {
		return nil, err
	}
	if err := writeFirst(ctx, sub, d.ID, ncols, point, opts, f); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

func writeFirst(ctx context.Context, sub *exec.Subscription, id uint32, ncols int, point *asOfState, opts subscribeOptions, f *feed) error {
	start, snap, err := sub.Start(ctx)
	if err != nil {
		return err
	}
	now, err := exec.ViewCounts(snap, id, ncols)
	snap.Close()
	if err != nil {
		return err
	}
	if point == nil {
		if opts.snapshot {
			return f.write(ctx, start, exec.DiffCounts(nil, now))
		}
		return nil
	}
	then, err := exec.ViewCounts(point.p.Store.DB(), id, ncols)
	if err != nil {
		return err
	}
	if point.meta.Epoch > start {
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "%s (epoch %d) is newer than the view's committed state (epoch %d)", meta.PointLabel(point.meta), point.meta.Epoch, start)
	}
	if opts.snapshot {
		if err := f.write(ctx, point.meta.Epoch, exec.DiffCounts(nil, then)); err != nil {
			return err
		}
	}
	// The epochs between the point and the start come as one net change
	// at the start epoch.
	if start > point.meta.Epoch {
		return f.write(ctx, start, exec.DiffCounts(then, now))
	}
	return nil
}

// resolveFeedPoint finds the point a SUBSCRIBE ... AS OF names; AS OF
// EPOCH e needs a retained point taken at exactly e (meta.Points.ResolveEpoch).
func (e *Engine) resolveFeedPoint(at *front.AsOf) (*meta.PointMeta, error) {
	if at.Kind != front.PointEpoch {
		return e.resolvePoint(at.Kind, at.Name, at.ID, at.Time)
	}
	epoch, err := strconv.ParseUint(at.ID, 10, 64)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "epoch %q is not a number", at.ID)
	}
	return e.points.ResolveEpoch(epoch)
}

// feed writes change rows: [epoch,] diff, columns.
type feed struct {
	w        pgwire.RowWriter
	ncols    int
	progress bool
	noEpoch  bool
	row      types.Row
}

// write sends the changes of one epoch; with progress, an epoch without
// changes is one row with a NULL diff.
func (f *feed) write(ctx context.Context, epoch uint64, cs []exec.RowDiff) error {
	if len(cs) == 0 && f.progress {
		f.row = append(f.row[:0], types.NewInt(int64(epoch)), types.Null)
		for range f.ncols {
			f.row = append(f.row, types.Null)
		}
		return f.w.WriteRow(f.row)
	}
	for i, c := range cs {
		if i%1024 == 1023 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		f.row = f.row[:0]
		if !f.noEpoch {
			f.row = append(f.row, types.NewInt(int64(epoch)))
		}
		f.row = append(append(f.row, types.NewInt(c.Diff)), c.Row...)
		if err := f.w.WriteRow(f.row); err != nil {
			return err
		}
	}
	return nil
}
