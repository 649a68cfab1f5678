package sql

import (
	"context"
	"strconv"
	"time"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// SQLSTATE 3B001: invalid_savepoint_specification.

var savepointColumns = []types.Column{
	{Name: "name", Type: types.Text},
	{Name: "id", Type: types.Int8},
	{Name: "epoch", Type: types.Int8},
	{Name: "created_at", Type: types.Timestamptz},
	{Name: "size_bytes", Type: types.Int8},
	{Name: "directory", Type: types.Text},
	// location: the savepoint's object in the savepoints bucket when it
	// is there, else its local directory.
	{Name: "location", Type: types.Text},
	{Name: "positions", Type: types.Text},
}

func (e *Engine) savepointRows() ([]types.Row, error) {
	sps, err := e.points.Savepoints()
	if err != nil {
		return nil, err
	}
	var rows []types.Row
	for _, sp := range sps {
		m := sp.Meta
		dir := types.NewString(m.Dir)
		if m.Dir == "" {
			dir = types.Null
		}
		rows = append(rows, types.Row{
			types.NewString(m.Name), types.NewInt(int64(m.ID)), types.NewInt(int64(m.Epoch)),
			types.NewTime(m.CompletedAt), types.NewInt(m.SizeBytes), dir,
			types.NewString(sp.Location), types.NewString(meta.FormatPositions(m.Positions)),
		})
	}
	return rows, nil
}

// createSavepoint is SAVEPOINT name outside a transaction block: a
// durable point of the whole server's state (meta.Points).
func (e *Engine) createSavepoint(ctx context.Context, name string) (string, error) {
	if _, err := e.points.TakeSavepoint(ctx, name); err != nil {
		return "", err
	}
	return "SAVEPOINT", nil
}

func (e *Engine) releaseSavepoint(name string) (string, error) {
	if err := e.points.ReleaseSavepoint(name); err != nil {
		return "", err
	}
	return "RELEASE", nil
}

// resolvePoint finds the checkpoint or savepoint a ROLLBACK TO or AS OF
// names, verified.
func (e *Engine) resolvePoint(kind front.PointKind, name, id, ts string) (*meta.PointMeta, error) {
	return e.points.Resolve(meta.PointKind(kind), name, id, ts)
}

// rollback restores the catalog, every view and every source position to
// m while the server runs. Queries wait (stateMu) and checkpoints pause
// (coordinator exclusive) while the state is swapped in one atomic batch;
// a checkpoint taken right after makes the rollback survive a crash.
func (e *Engine) rollback(ctx context.Context, m *meta.PointMeta) (string, error) {
	if err := e.points.CheckInputRetained(ctx, m); err != nil {
		return "", err
	}
	point, err := e.openPoint(m)
	if err != nil {
		return "", err
	}
	defer point.release()
	src := point.p.Store
	start := time.Now()
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	// Under ddlMu no purge runs until the state is swapped.
	if err := e.points.CheckRestoredInput(ctx, point.p, e.sourceStreams); err != nil {
		return "", err
	}
	// stateMu is released by defer: no way out of the swap, an early
	// return or a panic, may leave every query waiting on it.
	// Sources follow from the positions the restored tables hold.
	e.pgSources.StopAll()
	defer e.pgSources.StartAll()
	err = func() error {
		e.stateMu.Lock()
		defer e.stateMu.Unlock()
		err := e.node.ReplaceState(src, e.tables.Reset, e.loadCatalog)
		if err == nil {
			e.noteReplay(ctx)
		}
		return err
	}()
	if err != nil {
		return "", sqlerr.New(sqlerr.InternalError, "rollback failed: %v", err)
	}
	e.log.Info("rolled back", "to", m.Dir, "kind", m.Kind, "epoch", m.Epoch, "took", time.Since(start), "paused", e.rt.Paused())
	if err := e.node.CheckpointRollback(context.WithoutCancel(ctx)); err != nil {
		return "", sqlerr.New(sqlerr.InternalError, "rolled back, but the checkpoint that records it failed: %v", err)
	}
	return "ROLLBACK", nil
}

// alterStreamPosition moves every view's source on a stream: the views keep
// their state and read on from the new position.
func (e *Engine) alterStreamPosition(ctx context.Context, n *front.AlterStreamPosition) (string, error) {
	const tag = "ALTER STREAM"
	d, ok := e.lookup(n.Stream)
	if !ok || d.Kind != catalog.KindStream {
		return "", sqlerr.New(sqlerr.UndefinedTable, "stream %q does not exist", n.Stream)
	}
	var last uint64 // the position to store: the sequence before the next one to read
	switch n.Position {
	case front.PositionEarliest:
		first, err := e.streams.First(ctx, d)
		if err != nil {
			return "", err
		}
		last = max(first, 1) - 1
	case front.PositionLatest:
		seq, err := e.streams.LastOnSubject(ctx, d)
		if err != nil {
			return "", err
		}
		last = seq
	case front.PositionTimestamp:
		t, err := types.ParseTimestamp(n.Timestamp)
		if err != nil {
			return "", sqlerr.New(sqlerr.InvalidTextRepresentation, "%s", err.Error())
		}
		seq, err := e.streams.SeqAtTime(ctx, d, t)
		if err != nil {
			return "", err
		}
		last = seq - 1
	default:
		seq, err := strconv.ParseUint(n.Position, 10, 64)
		if err != nil || seq == 0 {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "position %q must be 'earliest', 'latest', a sequence number >= 1 or TIMESTAMP '...'", n.Position)
		}
		last = seq - 1
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	moved := 0
	for _, v := range e.dependents(d.Name) {
		root, err := e.viewPlan(v)
		if err != nil {
			return "", err
		}
		streams, err := e.sourceStreams(v, root)
		if err != nil {
			return "", err
		}
		e.rt.Remove(v.ID)
		var sources []uint16
		for i, name := range streams {
			if name == d.Name {
				sources = append(sources, uint16(i))
			}
		}
		if err := e.state.MovePositions(v.ID, sources, last); err != nil {
			return "", err
		}
		if err := e.startView(v, root); err != nil {
			return "", err
		}
		moved++
	}
	e.log.Info("moved stream position", "stream", d.Name, "next_seq", last+1, "views", moved)
	return tag, e.ddlCheckpoint(ctx)
}

// asOfReader opens the state of a checkpoint or savepoint for an AS OF
// query. The caller must release it.
func (e *Engine) asOfReader(a *front.AsOf) (*asOfState, error) {
	m, err := e.resolvePoint(a.Kind, a.Name, a.ID, a.Time)
	if err != nil {
		return nil, err
	}
	return e.openPoint(m)
}

// openPoint opens (or finds open) the state of a checkpoint or savepoint
// (meta.Points.Open) and takes a reference to it; release it when done.
func (e *Engine) openPoint(m *meta.PointMeta) (*asOfState, error) {
	p, err := e.points.Open(m)
	if err != nil {
		return nil, err
	}
	return &asOfState{p: p, meta: p.Meta, objs: p.Objs}, nil
}

// asOfState is an opened checkpoint or savepoint as queries bind against
// and read it.
type asOfState struct {
	p    *meta.Point
	meta *meta.PointMeta
	objs map[string]*catalog.Descriptor
}

// release gives back the reference taken by openPoint.
func (a *asOfState) release() { a.p.Release() }

func (a *asOfState) lookup(name string) (*catalog.Descriptor, bool) {
	d, ok := a.objs[name]
	return d, ok
}

func (a *asOfState) systemTable(string) (*catalog.Descriptor, func() []types.Row, bool) {
	return nil, nil, false
}
