package meta

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// Points are the checkpoints and savepoints as the frontend names and
// reads them: SAVEPOINT and RELEASE SAVEPOINT, SHOW SAVEPOINTS, finding
// the point a ROLLBACK TO or AS OF names (fetching a savepoint from its
// bucket when another server took it), checking that JetStream still holds
// the input a point reads on from, and the cache of points opened for AS
// OF and rollback. What ROLLBACK TO means (the swap of the live state) is
// the frontend's.

// PointKind says what a ROLLBACK TO or AS OF names a point by.
type PointKind string

const (
	PointSavepoint  PointKind = "savepoint"
	PointCheckpoint PointKind = "checkpoint"
	PointTimestamp  PointKind = "timestamp"
)

// PointMeta is the record of a checkpoint or savepoint (its kind, id or
// name, epoch, directory and source positions) that Resolve returns and
// Open, CheckInputRetained and the frontend's messages take.
type PointMeta = checkpoint.Meta

// PointLabel names a checkpoint or savepoint for messages.
func PointLabel(m *PointMeta) string {
	if m.Kind == checkpoint.KindSavepoint {
		return fmt.Sprintf("savepoint %q", m.Name)
	}
	return fmt.Sprintf("checkpoint %d", m.ID)
}

// PointsCoordinator is the checkpoint coordinator as Points use it
// (*checkpoint.Coordinator).
type PointsCoordinator interface {
	// TakeSavepoint takes the savepoint called name.
	TakeSavepoint(ctx context.Context, name string) (*checkpoint.Meta, error)
	// Remotes returns the checkpoint and savepoint buckets (nil: none).
	Remotes() (checkpoints, savepoints *checkpoint.Remote)
	// ReleaseRemoteSavepoint deletes the savepoint called name from its
	// bucket.
	ReleaseRemoteSavepoint(ctx context.Context, name string) error
}

// PointsConfig is what Points work on: one node's components.
type PointsConfig struct {
	Coord    PointsCoordinator
	Settings func() checkpoint.Settings
	Broker   *broker.Broker
	Log      *slog.Logger
}

// maxOpenPoints is how many opened points the cache keeps.
const maxOpenPoints = 4

// Points manages one server's checkpoints and savepoints (see above).
type Points struct {
	cfg PointsConfig

	// mu guards open and every open Point's refs and retired; a leaf
	// lock: nothing else is taken under it.
	mu   sync.Mutex
	open map[string]*Point // by directory
}

// NewPoints returns Points over cfg with nothing open.
func NewPoints(cfg PointsConfig) *Points {
	return &Points{cfg: cfg, open: map[string]*Point{}}
}

// Point is the catalog and state of one opened checkpoint or savepoint.
// Its fields do not change; Release it when done.
type Point struct {
	Meta  *checkpoint.Meta
	Store *storage.Store
	Objs  map[string]*catalog.Descriptor // by name

	points  *Points
	refs    int  // guarded by points.mu
	retired bool // out of the cache: close when refs drops to 0
}

// Lookup returns the object called name in the point's catalog.
func (p *Point) Lookup(name string) (*catalog.Descriptor, bool) {
	d, ok := p.Objs[name]
	return d, ok
}

// Release gives back a reference taken by Open.
func (p *Point) Release() {
	p.points.mu.Lock()
	defer p.points.mu.Unlock()
	p.refs--
	if p.refs == 0 && p.retired {
		p.Store.Close()
	}
}

// Open opens (or finds open) the state of a checkpoint or savepoint and
// takes a reference to it; Release it when done. Open points are cached;
// a point evicted or released while in use closes when its last reader
// releases it.
func (ps *Points) Open(m *checkpoint.Meta) (*Point, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p, ok := ps.open[m.Dir]; ok {
		if p.Meta.ID == m.ID {
			p.refs++
			return p, nil
		}
		ps.retireLocked(m.Dir, p) // a released savepoint's name was reused
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
	p := &Point{Meta: m, Store: store, Objs: map[string]*catalog.Descriptor{}, refs: 1, points: ps}
	for _, d := range descs {
		p.Objs[d.Name] = d
	}
	for len(ps.open) >= maxOpenPoints {
		for dir, old := range ps.open {
			ps.retireLocked(dir, old)
			break
		}
	}
	ps.open[m.Dir] = p
	return p, nil
}

// retireLocked drops a point from the cache; it closes once unused.
func (ps *Points) retireLocked(dir string, p *Point) {
	delete(ps.open, dir)
	p.retired = true
	if p.refs == 0 {
		p.Store.Close()
	}
}

// retire drops the cached point of dir, if any.
func (ps *Points) retire(dir string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p, ok := ps.open[dir]; ok {
		ps.retireLocked(dir, p)
	}
}

// CloseAll drops every cached point; each closes once unused (the server
// shuts down).
func (ps *Points) CloseAll() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for dir, p := range ps.open {
		ps.retireLocked(dir, p)
	}
}

// ValidPointName refuses savepoint names that are not identifiers
// (42602): a name is one directory under state.savepoints.dir, never a
// path.
func ValidPointName(name string) error {
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

// TakeSavepoint takes the savepoint called name (SAVEPOINT).
func (ps *Points) TakeSavepoint(ctx context.Context, name string) (*checkpoint.Meta, error) {
	if err := ValidPointName(name); err != nil {
		return nil, err
	}
	m, err := ps.cfg.Coord.TakeSavepoint(ctx, name)
	if errors.Is(err, checkpoint.ErrSavepointExists) {
		return nil, sqlerr.New(sqlerr.DuplicateObject, "savepoint %q already exists", name).
			WithHint("RELEASE SAVEPOINT %s first, or choose another name.", name)
	}
	if err != nil {
		return nil, sqlerr.New(sqlerr.InternalError, "savepoint %s failed: %v", name, err)
	}
	ps.cfg.Log.Info("savepoint", "name", name, "dir", m.Dir)
	return m, nil
}

// ReleaseSavepoint deletes the savepoint called name, here and from its
// bucket (RELEASE SAVEPOINT).
func (ps *Points) ReleaseSavepoint(name string) error {
	root := ps.cfg.Settings().SavepointsDir
	path, err := checkpoint.SavepointPath(root, name)
	if err == nil {
		ps.retire(path)
		err = checkpoint.ReleaseSavepoint(root, name)
		// The copy in the savepoints bucket goes too (a savepoint may be
		// there only, taken by another server of the bucket).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		rerr := ps.cfg.Coord.ReleaseRemoteSavepoint(ctx, name)
		cancel()
		switch {
		case rerr == nil && errors.Is(err, checkpoint.ErrNoSuchPoint):
			err = nil
		case rerr != nil && !errors.Is(rerr, checkpoint.ErrNoSuchPoint) && err == nil:
			return sqlerr.New(sqlerr.InternalError, "savepoint %q was deleted here but not from its bucket: %v", name, rerr).
				WithHint("Run RELEASE SAVEPOINT %s again once NATS is reachable.", name)
		}
	}
	if errors.Is(err, checkpoint.ErrNoSuchPoint) {
		return sqlerr.New(sqlerr.InvalidSavepointSpecification, "savepoint %q does not exist", name)
	}
	if err != nil {
		return pointNameError(err)
	}
	ps.cfg.Log.Info("released savepoint", "name", name)
	return nil
}

// Savepoint is one savepoint SHOW SAVEPOINTS lists.
type Savepoint struct {
	// Meta's Dir is "" for a savepoint only in the bucket.
	Meta *checkpoint.Meta
	// Location is the savepoint's object in the savepoints bucket when it
	// is there, else its local directory.
	Location string
}

// Savepoints lists the local savepoints and those in the savepoints
// bucket, by id.
func (ps *Points) Savepoints() ([]Savepoint, error) {
	metas, err := checkpoint.Savepoints(ps.cfg.Settings().SavepointsDir)
	if err != nil {
		return nil, err
	}
	inBucket := map[string]string{}
	local := map[string]bool{}
	for _, m := range metas {
		local[m.Name] = true
	}
	if _, r := ps.cfg.Coord.Remotes(); r != nil {
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
	out := make([]Savepoint, len(metas))
	for i, m := range metas {
		location := m.Dir
		if l, ok := inBucket[m.Name]; ok {
			location = l
		}
		out[i] = Savepoint{Meta: m, Location: location}
	}
	return out, nil
}

// fetchSavepoint downloads the savepoint called name from the savepoints
// bucket into the local savepoints directory (where ROLLBACK TO and AS OF
// read it from then on); checkpoint.ErrNoSuchPoint when the bucket has
// none, or there is no bucket.
func (ps *Points) fetchSavepoint(name string) (*checkpoint.Meta, error) {
	_, r := ps.cfg.Coord.Remotes()
	if r == nil {
		return nil, checkpoint.ErrNoSuchPoint
	}
	root := ps.cfg.Settings().SavepointsDir
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
	ps.cfg.Log.Info("downloaded savepoint from its bucket", "name", name, "bucket", r.Bucket, "dir", path)
	return checkpoint.FindSavepoint(root, name)
}

// Resolve finds the checkpoint or savepoint a ROLLBACK TO or AS OF names,
// verified: a savepoint by name, a checkpoint by id, or the newest point
// at or before a timestamp.
func (ps *Points) Resolve(kind PointKind, name, id, ts string) (*checkpoint.Meta, error) {
	s := ps.cfg.Settings()
	var m *checkpoint.Meta
	var err error
	switch kind {
	case PointSavepoint:
		m, err = checkpoint.FindSavepoint(s.SavepointsDir, name)
		if errors.Is(err, checkpoint.ErrNoSuchPoint) {
			// Taken by another server of the savepoints bucket.
			m, err = ps.fetchSavepoint(name)
		}
		if errors.Is(err, checkpoint.ErrNoSuchPoint) || errors.Is(err, os.ErrNotExist) {
			return nil, sqlerr.New(sqlerr.InvalidSavepointSpecification, "savepoint %q does not exist", name)
		}
		var ne *checkpoint.NameError
		if errors.As(err, &ne) {
			return nil, pointNameError(err)
		}
	case PointCheckpoint:
		n, perr := strconv.ParseUint(id, 10, 64)
		if perr != nil {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "checkpoint id %q is not a number", id)
		}
		m, err = checkpoint.FindCheckpoint(s.Dir, n)
		if errors.Is(err, checkpoint.ErrNoSuchPoint) {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "checkpoint %d does not exist or is no longer retained", n).
				WithHint("SHOW CHECKPOINTS lists the retained ones.")
		}
	case PointTimestamp:
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

// ResolveEpoch finds the point a SUBSCRIBE ... AS OF EPOCH names: a
// retained checkpoint or savepoint taken at exactly epoch (only then are
// the changes after it known exactly), verified as Resolve does.
func (ps *Points) ResolveEpoch(epoch uint64) (*PointMeta, error) {
	s := ps.cfg.Settings()
	cps, err := checkpoint.List(s.Dir)
	if err != nil {
		return nil, err
	}
	sps, err := checkpoint.Savepoints(s.SavepointsDir)
	if err != nil {
		return nil, err
	}
	var have []string
	for _, m := range append(sps, cps...) {
		if m.Status != checkpoint.StatusCompleted {
			continue
		}
		if m.Epoch == epoch {
			if m.Kind == checkpoint.KindSavepoint {
				return ps.Resolve(PointSavepoint, m.Name, "", "")
			}
			return ps.Resolve(PointCheckpoint, "", strconv.FormatUint(m.ID, 10), "")
		}
		have = append(have, strconv.FormatUint(m.Epoch, 10))
	}
	hint := "No checkpoint or savepoint is retained."
	if len(have) > 0 {
		hint = fmt.Sprintf("Retained points are at epochs %s; SUBSCRIBE AS OF one of them, or without AS OF for a new snapshot.", strings.Join(have, ", "))
	}
	return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "no retained checkpoint or savepoint is at epoch %d, so the changes after it cannot be given exactly", epoch).WithHint("%s", hint)
}

// CheckInputRetained fails (55000) when JetStream no longer holds the
// input that sources would replay from m's positions.
func (ps *Points) CheckInputRetained(ctx context.Context, m *checkpoint.Meta) error {
	for _, p := range m.Positions {
		js, err := ps.cfg.Broker.JS.StreamNameBySubject(ctx, p.Subject)
		if err != nil {
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot roll back: no JetStream stream holds subject %q of stream %s any more", p.Subject, p.Stream)
			}
			return err
		}
		first, err := ps.cfg.Broker.FirstSeq(ctx, js)
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
