package sql

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/storage"
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
	metas, err := checkpoint.Savepoints(e.checkpointSettings().SavepointsDir)
	if err != nil {
		return nil, err
	}
	inBucket := map[string]string{}
	local := map[string]bool{}
	for _, m := range metas {
		local[m.Name] = true
	}
	if _, r := e.coord.Remotes(); r != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		remote, err := r.Savepoints(ctx)
		cancel()
		if err != nil {
			return nil, err
		}
		for _, m := range remote {
			inBucket[m.Name] = r.LocationOf(m)
			if !local[m.Name] {
				// Only in the bucket (taken by another server of it,
				// e.g. the active server before a takeover): no local
				// directory until a ROLLBACK TO or AS OF downloads it.
				m.Dir = ""
				metas = append(metas, m)
			}
		}
	}
	sort.SliceStable(metas, func(i, j int) bool { return metas[i].ID < metas[j].ID })
	var rows []types.Row
	for _, m := range metas {
		location := m.Dir
		if l, ok := inBucket[m.Name]; ok {
			location = l
		}
		dir := types.NewString(m.Dir)
		if m.Dir == "" {
			dir = types.Null
		}
		rows = append(rows, types.Row{
			types.NewString(m.Name), types.NewInt(int64(m.ID)), types.NewInt(int64(m.Epoch)),
			types.NewTime(m.CompletedAt), types.NewInt(m.SizeBytes), dir,
			types.NewString(location), types.NewString(formatPositions(m.Positions)),
		})
	}
	return rows, nil
}

// fetchSavepoint downloads the savepoint called name from the savepoints
// bucket into the local savepoints directory (where ROLLBACK TO and AS OF
// read it from then on); checkpoint.ErrNoSuchPoint when the bucket has
// none, or there is no bucket.
func (e *Engine) fetchSavepoint(name string) (*checkpoint.Meta, error) {
	_, r := e.coord.Remotes()
	if r == nil {
		return nil, checkpoint.ErrNoSuchPoint
	}
	root := e.checkpointSettings().SavepointsDir
	path, err := checkpoint.SavepointPath(root, name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	m, err := r.FindSavepoint(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	if _, err := r.Download(ctx, m, path); err != nil {
		return nil, err
	}
	e.log.Info("downloaded savepoint from its bucket", "name", name, "bucket", r.Bucket, "dir", path)
	return checkpoint.FindSavepoint(root, name)
}

func (e *Engine) createSavepoint(ctx context.Context, name string) (string, error) {
	if err := validPointName(name); err != nil {
		return "", err
	}
	m, err := e.coord.TakeSavepoint(ctx, name)
	if errors.Is(err, checkpoint.ErrSavepointExists) {
		return "", sqlerr.New(sqlerr.DuplicateObject, "savepoint %q already exists", name).
			WithHint("RELEASE SAVEPOINT %s first, or choose another name.", name)
	}
	if err != nil {
		return "", sqlerr.New(sqlerr.InternalError, "savepoint %s failed: %v", name, err)
	}
	e.log.Info("savepoint", "name", name, "dir", m.Dir)
	return "SAVEPOINT", nil
}

// validPointName refuses savepoint names that are not identifiers (42602):
// a name is one directory under state.savepoints.dir, never a path.
func validPointName(name string) error {
	if err := checkpoint.CheckSavepointName(name); err != nil {
		return pointNameError(err)
	}
	return nil
}

// pointNameError turns a *checkpoint.NameError into 42602 with a hint;
// other errors pass through.
func pointNameError(err error) error {
	var ne *checkpoint.NameError
	if !errors.As(err, &ne) {
		return err
	}
	return sqlerr.New(sqlerr.InvalidName, "%s", ne.Error()).
		WithHint("A savepoint name is an identifier of at most %d bytes: no / or \\, no control characters, not starting with a dot.", checkpoint.MaxSavepointNameLen)
}

func (e *Engine) releaseSavepoint(name string) (string, error) {
	root := e.checkpointSettings().SavepointsDir
	path, err := checkpoint.SavepointPath(root, name)
	if err == nil {
		e.retirePoint(path)
		err = checkpoint.ReleaseSavepoint(root, name)
		// The copy in the savepoints bucket goes too (a savepoint may be
		// there only, taken by another server of the bucket).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		rerr := e.coord.ReleaseRemoteSavepoint(ctx, name)
		cancel()
		switch {
		case rerr == nil && errors.Is(err, checkpoint.ErrNoSuchPoint):
			err = nil
		case rerr != nil && !errors.Is(rerr, checkpoint.ErrNoSuchPoint) && err == nil:
			return "", sqlerr.New(sqlerr.InternalError, "savepoint %q was deleted here but not from its bucket: %v", name, rerr).
				WithHint("Run RELEASE SAVEPOINT %s again once NATS is reachable.", name)
		}
	}
	if errors.Is(err, checkpoint.ErrNoSuchPoint) {
		return "", sqlerr.New(sqlerr.InvalidSavepointSpecification, "savepoint %q does not exist", name)
	}
	if err != nil {
		return "", pointNameError(err)
	}
	e.log.Info("released savepoint", "name", name)
	return "RELEASE", nil
}

// resolvePoint finds the checkpoint or savepoint a ROLLBACK TO or AS OF
// names, verified.
func (e *Engine) resolvePoint(kind front.PointKind, name, id, ts string) (*checkpoint.Meta, error) {
	s := e.checkpointSettings()
	var m *checkpoint.Meta
	var err error
	switch kind {
	case front.PointSavepoint:
		m, err = checkpoint.FindSavepoint(s.SavepointsDir, name)
		if errors.Is(err, checkpoint.ErrNoSuchPoint) {
			// Taken by another server of the savepoints bucket.
			m, err = e.fetchSavepoint(name)
		}
		if errors.Is(err, checkpoint.ErrNoSuchPoint) || errors.Is(err, os.ErrNotExist) {
			return nil, sqlerr.New(sqlerr.InvalidSavepointSpecification, "savepoint %q does not exist", name)
		}
		var ne *checkpoint.NameError
		if errors.As(err, &ne) {
			return nil, pointNameError(err)
		}
	case front.PointCheckpoint:
		n, perr := strconv.ParseUint(id, 10, 64)
		if perr != nil {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "checkpoint id %q is not a number", id)
		}
		m, err = checkpoint.FindCheckpoint(s.Dir, n)
		if errors.Is(err, checkpoint.ErrNoSuchPoint) {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "checkpoint %d does not exist or is no longer retained", n).
				WithHint("SHOW CHECKPOINTS lists the retained ones.")
		}
	case front.PointTimestamp:
		t, perr := types.ParseTimestamp(ts)
		if perr != nil {
			return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "%s", perr.Error())
		}
		m, err = checkpoint.NewestAtOrBefore(s.Dir, s.SavepointsDir, t)
		if errors.Is(err, checkpoint.ErrNoSuchPoint) {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "no retained checkpoint or savepoint at or before %s", t.Format(time.RFC3339))
		}
	default:
		return nil, sqlerr.New(sqlerr.SyntaxError, "unknown point kind %q", kind)
	}
	if err != nil {
		return nil, sqlerr.New(sqlerr.DataException, "cannot use %s: %v", kind, err)
	}
	return m, nil
}

// checkInputRetained fails when JetStream no longer holds the input that
// sources would replay from m's positions.
func (e *Engine) checkInputRetained(ctx context.Context, m *checkpoint.Meta) error {
	for _, p := range m.Positions {
		js, err := e.broker.JS.StreamNameBySubject(ctx, p.Subject)
		if err != nil {
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot roll back: no JetStream stream holds subject %q of stream %s any more", p.Subject, p.Stream)
			}
			return err
		}
		first, err := e.broker.FirstSeq(ctx, js)
		if err != nil {
			return err
		}
		if first > p.Seq+1 {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
				"cannot roll back: view %s would replay stream %s from sequence %d, but JetStream stream %s retains only from %d on",
				p.View, p.Stream, p.Seq+1, js, first).WithHint("Nothing was changed. Choose a newer savepoint or checkpoint.")
		}
	}
	return nil
}

// rollback restores the catalog, every view and every source position to
// m while the server runs. Queries wait (stateMu) and checkpoints pause
// (coordinator exclusive) while the state is swapped in one atomic batch;
// a checkpoint taken right after makes the rollback survive a crash.
func (e *Engine) rollback(ctx context.Context, m *checkpoint.Meta) (string, error) {
	if err := e.checkInputRetained(ctx, m); err != nil {
		return "", err
	}
	point, err := e.openPoint(m)
	if err != nil {
		return "", err
	}
	defer point.release()
	src := point.store
	start := time.Now()
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	// Under ddlMu no purge runs until the state is swapped.
	if err := e.checkRestoredInput(ctx, point); err != nil {
		return "", err
	}
	// stateMu is released by defer: no way out of the swap, an early
	// return or a panic, may leave every query waiting on it.
	// Sources follow from the positions the restored tables hold.
	e.pgSources.stopAll()
	defer e.pgSources.startAll(e)
	err = func() error {
		e.stateMu.Lock()
		defer e.stateMu.Unlock()
		carry := func() (func(uint64) error, error) {
			e.tables.reset()
			sinks, err := captureSinks(e.store)
			if err != nil {
				return nil, err
			}
			return func(epoch uint64) error { return restoreSinks(e.store, sinks, epoch) }, nil
		}
		err := e.node.ReplaceState(src, carry, e.loadCatalog)
		if err == nil {
			e.noteReplay(ctx)
		}
		return err
	}()
	if err != nil {
		return "", sqlerr.New(sqlerr.InternalError, "rollback failed: %v", err)
	}
	e.log.Info("rolled back", "to", m.Dir, "kind", m.Kind, "epoch", m.Epoch, "took", time.Since(start), "paused", e.rt.Paused())
	if _, err := e.coord.Take(context.WithoutCancel(ctx), "rollback"); err != nil {
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
		first, err := e.broker.FirstSeq(ctx, d.JSStream)
		if err != nil {
			return "", err
		}
		last = max(first, 1) - 1
	case front.PositionLatest:
		seq, err := e.broker.LastSeqForSubject(ctx, d.JSStream, d.Subject)
		if err != nil {
			return "", err
		}
		last = seq
	case front.PositionTimestamp:
		t, err := types.ParseTimestamp(n.Timestamp)
		if err != nil {
			return "", sqlerr.New(sqlerr.InvalidTextRepresentation, "%s", err.Error())
		}
		seq, err := e.broker.SeqAtTime(ctx, d.JSStream, d.Subject, t)
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
		b := e.store.NewBatch()
		for i, name := range streams {
			if name != d.Name {
				continue
			}
			pos, err := e.store.Position(v.ID, uint16(i))
			if err != nil {
				b.Close()
				return "", err
			}
			pos.Seq = last
			if err := storage.PutPosition(b, v.ID, uint16(i), pos); err != nil {
				b.Close()
				return "", err
			}
		}
		err = e.store.Commit(b, true)
		b.Close()
		if err != nil {
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
// and takes a reference to it; release it when done. Open points are
// cached; a point evicted or released while in use closes when its last
// reader releases it.
func (e *Engine) openPoint(m *checkpoint.Meta) (*asOfState, error) {
	e.asOfMu.Lock()
	defer e.asOfMu.Unlock()
	if st, ok := e.asOf[m.Dir]; ok {
		if st.meta.ID == m.ID {
			st.refs++
			return st, nil
		}
		e.retireLocked(m.Dir, st) // a released savepoint's name was reused
	}
	store, err := storage.OpenReadOnly(filepath.Join(m.Dir, checkpoint.StateDir), m.Backend == "memory")
	if err != nil {
		if again, verr := checkpoint.ReadMeta(m.Dir); verr != nil || again.ID != m.ID {
			// Released (or replaced) while we opened it.
			if m.Kind == checkpoint.KindSavepoint {
				return nil, sqlerr.New(sqlerr.InvalidSavepointSpecification, "savepoint %q does not exist", m.Name)
			}
			return nil, sqlerr.New(sqlerr.UndefinedObject, "checkpoint %d is no longer retained", m.ID)
		}
		return nil, sqlerr.New(sqlerr.DataException, "cannot open %s: %v", m.Dir, err)
	}
	descs, err := storage.Descriptors(store.DB())
	if err != nil {
		store.Close()
		return nil, err
	}
	st := &asOfState{meta: m, store: store, objs: map[string]*catalog.Descriptor{}, refs: 1, e: e}
	for _, d := range descs {
		st.objs[d.Name] = d
	}
	for len(e.asOf) >= 4 {
		for dir, old := range e.asOf {
			e.retireLocked(dir, old)
			break
		}
	}
	e.asOf[m.Dir] = st
	return st, nil
}

// retireLocked drops a point from the cache; it closes once unused.
func (e *Engine) retireLocked(dir string, st *asOfState) {
	delete(e.asOf, dir)
	st.retired = true
	if st.refs == 0 {
		st.store.Close()
	}
}

// retirePoint drops the cached point of dir, if any (RELEASE SAVEPOINT).
func (e *Engine) retirePoint(dir string) {
	e.asOfMu.Lock()
	defer e.asOfMu.Unlock()
	if st, ok := e.asOf[dir]; ok {
		e.retireLocked(dir, st)
	}
}

// asOfState is the catalog and state of one checkpoint or savepoint.
type asOfState struct {
	meta    *checkpoint.Meta
	store   *storage.Store
	objs    map[string]*catalog.Descriptor
	e       *Engine
	refs    int  // guarded by e.asOfMu
	retired bool // out of the cache: close when refs drops to 0
}

// release gives back a reference taken by openPoint.
func (a *asOfState) release() {
	a.e.asOfMu.Lock()
	defer a.e.asOfMu.Unlock()
	a.refs--
	if a.refs == 0 && a.retired {
		a.store.Close()
	}
}

func (a *asOfState) lookup(name string) (*catalog.Descriptor, bool) {
	d, ok := a.objs[name]
	return d, ok
}

func (a *asOfState) systemTable(string) (*catalog.Descriptor, func() []types.Row, bool) {
	return nil, nil, false
}
