package meta

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamdb/checkpoint"
	"streamdb/sqlerr"
)

// fakeSavepoints is a checkpoint coordinator without buckets that takes
// savepoints by writing their metadata and a catalog of one table.
type fakeSavepoints struct {
	t      *testing.T
	root   string
	nextID uint64
}

func (c *fakeSavepoints) TakeSavepoint(_ context.Context, name string) (*checkpoint.Meta, error) {
	dir := filepath.Join(c.root, name)
	if _, err := os.Stat(dir); err == nil {
		return nil, checkpoint.ErrSavepointExists
	}
	c.nextID++
	pointWithTables(c.t, dir, "js_"+name)
	m := &checkpoint.Meta{FormatVersion: checkpoint.FormatVersion, Kind: checkpoint.KindSavepoint, ID: c.nextID, Name: name,
		Epoch: 10 * c.nextID, Status: checkpoint.StatusCompleted, Backend: "pebble", CompletedAt: time.Now()}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, checkpoint.MetadataFile), data, 0o644); err != nil {
		return nil, err
	}
	m.Dir = dir
	return m, nil
}

func (c *fakeSavepoints) Remotes() (*checkpoint.Remote, *checkpoint.Remote) { return nil, nil }
func (c *fakeSavepoints) ReleaseRemoteSavepoint(context.Context, string) error {
	return checkpoint.ErrNoSuchPoint
}

func sqlstate(err error) string {
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return se.Code
	}
	return ""
}

func newTestPoints(t *testing.T) *Points {
	root := filepath.Join(t.TempDir(), "savepoints")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return NewPoints(PointsConfig{
		Coord: &fakeSavepoints{t: t, root: root},
		Settings: func() checkpoint.Settings {
			return checkpoint.Settings{Dir: filepath.Join(t.TempDir(), "checkpoints"), SavepointsDir: root}
		},
		Log: slog.New(slog.DiscardHandler),
	})
}

// TestSavepointsLifecycle takes, lists, resolves, opens and releases
// savepoints, and checks the SQLSTATEs of what goes wrong.
func TestSavepointsLifecycle(t *testing.T) {
	ps := newTestPoints(t)
	ctx := context.Background()
	for _, name := range []string{"sp1", "sp2"} {
		if _, err := ps.TakeSavepoint(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ps.TakeSavepoint(ctx, "sp1"); sqlstate(err) != sqlerr.DuplicateObject {
		t.Errorf("a second savepoint sp1: %v, want SQLSTATE %s", err, sqlerr.DuplicateObject)
	}
	if _, err := ps.TakeSavepoint(ctx, "../up"); sqlstate(err) != sqlerr.InvalidName {
		t.Errorf("savepoint ../up: %v, want SQLSTATE %s", err, sqlerr.InvalidName)
	}
	sps, err := ps.Savepoints()
	if err != nil || len(sps) != 2 || sps[0].Meta.Name != "sp1" || sps[1].Meta.Name != "sp2" || sps[0].Location != sps[0].Meta.Dir {
		t.Fatalf("Savepoints() = %+v, %v", sps, err)
	}

	m, err := ps.Resolve(PointSavepoint, "sp1", "", "")
	if err != nil || m.Name != "sp1" {
		t.Fatalf("resolve sp1: %v, %v", m, err)
	}
	a, err := ps.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ps.Open(m)
	if err != nil || b != a {
		t.Fatalf("a second open of sp1 is not the cached point: %v", err)
	}
	if d, ok := a.Lookup("tjs_sp1"); !ok || d.JSStream != "js_sp1" {
		t.Errorf("the point's catalog: %v %v", d, ok)
	}
	// RELEASE while two readers hold it: out of the cache at once, open
	// until the last reader lets go.
	if err := ps.ReleaseSavepoint("sp1"); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Resolve(PointSavepoint, "sp1", "", ""); sqlstate(err) != sqlerr.InvalidSavepointSpecification {
		t.Errorf("resolve a released savepoint: %v, want SQLSTATE %s", err, sqlerr.InvalidSavepointSpecification)
	}
	if !a.retired || a.refs != 2 {
		t.Errorf("released while read: retired %v refs %d, want true 2", a.retired, a.refs)
	}
	if _, err := a.Store.Position(1, 0); err != nil {
		t.Errorf("a reader of a released savepoint cannot read it: %v", err)
	}
	a.Release()
	b.Release()
	if a.refs != 0 || len(ps.open) != 0 {
		t.Errorf("after the last release: refs %d, %d open", a.refs, len(ps.open))
	}
	if err := ps.ReleaseSavepoint("sp1"); sqlstate(err) != sqlerr.InvalidSavepointSpecification {
		t.Errorf("release sp1 twice: %v, want SQLSTATE %s", err, sqlerr.InvalidSavepointSpecification)
	}

	for _, c := range []struct {
		kind         PointKind
		name, id, ts string
		code         string
	}{
		{PointSavepoint, "nope", "", "", sqlerr.InvalidSavepointSpecification},
		{PointSavepoint, "a/b", "", "", sqlerr.InvalidName},
		{PointCheckpoint, "", "x", "", sqlerr.InvalidParameterValue},
		{PointCheckpoint, "", "7", "", sqlerr.UndefinedObject},
		{PointTimestamp, "", "", "not a time", sqlerr.InvalidTextRepresentation},
		{PointTimestamp, "", "", "2000-01-01 00:00:00", sqlerr.UndefinedObject},
	} {
		if _, err := ps.Resolve(c.kind, c.name, c.id, c.ts); sqlstate(err) != c.code {
			t.Errorf("resolve %s %q%q%q: %v, want SQLSTATE %s", c.kind, c.name, c.id, c.ts, err, c.code)
		}
	}
	m, err = ps.Resolve(PointTimestamp, "", "", time.Now().Add(time.Hour).UTC().Format("2006-01-02 15:04:05"))
	if err != nil || m.Name != "sp2" {
		t.Errorf("the newest point before an hour from now: %v, %v; want sp2", m, err)
	}
}

// TestResolveEpoch: SUBSCRIBE ... AS OF EPOCH finds the retained point
// taken at exactly that epoch, and otherwise says which epochs it could
// name.
func TestResolveEpoch(t *testing.T) {
	ps := newTestPoints(t)
	var se *sqlerr.Error
	if _, err := ps.ResolveEpoch(10); !errors.As(err, &se) || se.Code != sqlerr.ObjectNotInPrerequisiteState || se.Hint != "No checkpoint or savepoint is retained." {
		t.Errorf("epoch 10 with no point: %v, want SQLSTATE %s and a hint that none is retained", err, sqlerr.ObjectNotInPrerequisiteState)
	}
	for _, name := range []string{"sp1", "sp2"} { // at epochs 10 and 20
		if _, err := ps.TakeSavepoint(context.Background(), name); err != nil {
			t.Fatal(err)
		}
	}
	m, err := ps.ResolveEpoch(20)
	if err != nil || m.Name != "sp2" || m.Epoch != 20 {
		t.Fatalf("epoch 20: %+v, %v; want savepoint sp2", m, err)
	}
	if got := PointLabel(m); got != `savepoint "sp2"` {
		t.Errorf("PointLabel(sp2) = %s", got)
	}
	if got := PointLabel(&PointMeta{Kind: checkpoint.KindCheckpoint, ID: 3}); got != "checkpoint 3" {
		t.Errorf("PointLabel(checkpoint 3) = %s", got)
	}
	if _, err = ps.ResolveEpoch(15); !errors.As(err, &se) || se.Code != sqlerr.ObjectNotInPrerequisiteState || !strings.Contains(se.Hint, "epochs 10, 20;") {
		t.Errorf("epoch 15: %v, want SQLSTATE %s and a hint naming epochs 10, 20", err, sqlerr.ObjectNotInPrerequisiteState)
	}
}

// TestOpenPointsEvicted: the cache keeps maxOpenPoints points; one
// evicted while read closes when released, and opens again on demand.
func TestOpenPointsEvicted(t *testing.T) {
	ps := newTestPoints(t)
	var held []*Point
	for i := range maxOpenPoints + 2 {
		m, err := ps.TakeSavepoint(context.Background(), string(rune('a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := ps.Open(m)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, p)
	}
	if len(ps.open) != maxOpenPoints {
		t.Errorf("%d points open, want %d", len(ps.open), maxOpenPoints)
	}
	retired := 0
	for _, p := range held {
		if p.retired {
			retired++
		}
		if _, ok := p.Lookup("tjs_" + p.Meta.Name); !ok {
			t.Errorf("point %s lost its catalog", p.Meta.Name)
		}
		p.Release()
	}
	if retired != 2 {
		t.Errorf("%d points evicted, want 2", retired)
	}
	ps.CloseAll()
	if len(ps.open) != 0 {
		t.Errorf("%d points open after CloseAll", len(ps.open))
	}
}
