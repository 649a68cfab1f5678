package meta

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/storage"
)

// A dropped table's JetStream stream (its changelog) is deleted once no
// retained checkpoint or savepoint can bring the table back: ROLLBACK TO
// and recovery restore a table together with the position its pipeline
// resumes reading from, so the changelog must outlive every point that
// holds the table. DROP TABLE notes the stream here; the collector checks
// at DROP, then every second while something is pending (retention and
// RELEASE SAVEPOINT are what free a stream). Only JetStream streams that
// this server created for a table (marked with its id, see Owner) are ever
// deleted; once per process the collector lists them, to find those of
// tables an earlier run dropped.

// DroppedStreamsCoordinator is the checkpoint coordinator as the
// collector uses it (*checkpoint.Coordinator).
type DroppedStreamsCoordinator interface {
	// History lists the checkpoints the coordinator knows.
	History() []checkpoint.Meta
	// Exclusive runs fn while no checkpoint or savepoint is being taken.
	Exclusive(fn func() error) error
}

// DroppedStreamsConfig is what the collector works on: one node's
// components.
type DroppedStreamsConfig struct {
	// Catalog is the lock its owner holds while it changes the catalog;
	// a collection holds it throughout.
	Catalog sync.Locker
	// Live returns every object of the live catalog.
	Live     func() []*catalog.Descriptor
	Broker   *broker.Broker
	Coord    DroppedStreamsCoordinator
	Settings func() checkpoint.Settings
	// DataDir holds the owner file (ownerFile).
	DataDir string
	Log     *slog.Logger
}

// DroppedStreams is one server's pending JetStream streams of dropped
// tables, and their collector.
type DroppedStreams struct {
	cfg     DroppedStreamsConfig
	mu      sync.Mutex
	pending map[string]string // JetStream stream -> the dropped table's subject
	running bool              // the collector goroutine runs
	// discovered: this server's table streams were listed to find those
	// of tables an earlier run dropped (the pending set lives in memory).
	discovered bool
	owner      string // Owner, once read
	// catalogs caches what each retained point's catalog holds, by
	// directory (a point's catalog never changes).
	catalogs map[string]pointRefs
}

// pointRefs is what one checkpoint or savepoint's catalog refers to.
type pointRefs struct {
	id       uint64
	streams  map[string]bool // JetStream streams of its streams and tables
	subjects map[string]bool
}

// NewDroppedStreams returns an empty collector over cfg.
func NewDroppedStreams(cfg DroppedStreamsConfig) *DroppedStreams {
	return &DroppedStreams{cfg: cfg, pending: map[string]string{}, catalogs: map[string]pointRefs{}}
}

// Note records the JetStream stream of a table just dropped (or whose
// CREATE failed after the stream was made).
func (g *DroppedStreams) Note(jsStream, subject string) {
	if jsStream == "" {
		return
	}
	g.mu.Lock()
	g.pending[jsStream] = subject
	g.mu.Unlock()
}

// Forget takes a JetStream stream off the pending set: a table or stream
// created now reads it again.
func (g *DroppedStreams) Forget(jsStream string) {
	g.mu.Lock()
	delete(g.pending, jsStream)
	g.mu.Unlock()
}

// PendingCollides reports whether subject shares messages with the subject
// of a dropped table whose JetStream stream is not deleted yet.
func (g *DroppedStreams) PendingCollides(subject string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, subj := range g.pending {
		if broker.SubjectsCollide(subj, subject) {
			return true
		}
	}
	return false
}

// Start starts the collector goroutine unless it runs or has nothing to
// do. It runs a pass every second and ends when nothing is pending (or
// the broker is closed: the server has shut down).
func (g *DroppedStreams) Start() {
	g.mu.Lock()
	if g.running || (len(g.pending) == 0 && g.discovered) {
		g.mu.Unlock()
		return
	}
	g.running = true
	g.mu.Unlock()
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for range tick.C {
			if g.cfg.Broker.NC.IsClosed() {
				break
			}
			g.collect()
			if g.idle() {
				break
			}
		}
		g.mu.Lock()
		g.running = false
		g.mu.Unlock()
	}()
}

// collect runs one collection under the catalog lock.
func (g *DroppedStreams) collect() {
	g.cfg.Catalog.Lock()
	defer g.cfg.Catalog.Unlock()
	g.CollectLocked()
}

// idle reports whether nothing is left to collect.
func (g *DroppedStreams) idle() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending) == 0 && g.discovered
}

// CollectLocked deletes every pending JetStream stream that no live
// object and no retained checkpoint or savepoint refers to. The caller
// holds the catalog lock, so the catalog (and with it what new checkpoints
// can hold) does not change meanwhile. Failures are logged and retried
// later.
func (g *DroppedStreams) CollectLocked() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !g.discovered {
		if err := g.discover(ctx); err != nil {
			// Not retried: what an earlier run left stays (never
			// deleting is the safe side).
			g.cfg.Log.Warn("listing the JetStream streams of this server's tables failed; those of tables dropped before this start are kept", "err", err)
		}
		g.mu.Lock()
		g.discovered = true
		g.mu.Unlock()
	}
	g.mu.Lock()
	cands := make(map[string]string, len(g.pending))
	for js, subj := range g.pending {
		cands[js] = subj
	}
	g.mu.Unlock()
	if len(cands) == 0 {
		return
	}
	// A stream a live table or stream reads is not garbage; a later DROP
	// TABLE notes it again.
	for _, d := range g.cfg.Live() {
		for js, subj := range cands {
			if d.JSStream == js || (d.Subject == subj && (d.Kind == catalog.KindStream || d.Kind == catalog.KindTable)) {
				delete(cands, js)
				g.Forget(js)
			}
		}
	}
	// Cheap first: a point whose recorded source positions read the
	// subject holds the table.
	points := RetainedPoints(g.cfg.Coord.History(), g.cfg.Settings(), g.cfg.Log)
	for _, m := range points {
		for _, p := range m.Positions {
			for js, subj := range cands {
				if p.Subject == subj {
					delete(cands, js)
				}
			}
		}
	}
	if len(cands) == 0 {
		return
	}
	// Then exact: the catalogs of all retained points, read (and cached)
	// before taking the coordinator's exclusive lock, then checked again
	// under it, where no checkpoint or savepoint is being written.
	for _, m := range points {
		g.pointRefs(m)
	}
	err := g.cfg.Coord.Exclusive(func() error {
		for _, m := range RetainedPoints(g.cfg.Coord.History(), g.cfg.Settings(), g.cfg.Log) {
			refs, ok, err := g.pointRefs(m)
			if err != nil {
				return err
			}
			if !ok {
				continue // deleted meanwhile
			}
			for js, subj := range cands {
				if refs.streams[js] || refs.subjects[subj] {
					delete(cands, js)
				}
			}
		}
		owner, err := g.Owner()
		if err != nil {
			return err
		}
		for js, subj := range cands {
			by, err := g.cfg.Broker.TableOwner(ctx, js)
			if err != nil {
				return err
			}
			if by == owner {
				if err := g.cfg.Broker.DeleteStream(ctx, js); err != nil {
					return err
				}
				g.cfg.Log.Info("deleted the JetStream stream of a dropped table: no retained checkpoint or savepoint holds the table",
					"jetstream", js, "subject", subj)
			}
			g.Forget(js)
		}
		return nil
	})
	if err != nil {
		g.cfg.Log.Warn("deleting JetStream streams of dropped tables (will retry)", "err", err)
	}
	// Forget cached catalogs of points that are gone.
	live := map[string]bool{}
	for _, m := range RetainedPoints(g.cfg.Coord.History(), g.cfg.Settings(), g.cfg.Log) {
		live[m.Dir] = true
	}
	g.mu.Lock()
	for dir := range g.catalogs {
		if !live[dir] {
			delete(g.catalogs, dir)
		}
	}
	g.mu.Unlock()
}

// RetainedPoints lists the completed checkpoints of history (the
// coordinator's) and those in the checkpoint and savepoint directories
// of s, each once.
func RetainedPoints(history []checkpoint.Meta, s checkpoint.Settings, log *slog.Logger) []*checkpoint.Meta {
	seen := map[string]bool{}
	var out []*checkpoint.Meta
	add := func(m *checkpoint.Meta) {
		if !seen[m.Dir] {
			seen[m.Dir] = true
			out = append(out, m)
		}
	}
	for _, m := range history {
		if m.Status == checkpoint.StatusCompleted {
			add(&m)
		}
	}
	for _, dir := range []string{s.Dir, s.SavepointsDir} {
		ms, err := checkpoint.List(dir)
		if err != nil {
			log.Warn("listing checkpoints", "dir", dir, "err", err)
			continue
		}
		for _, m := range ms {
			add(m)
		}
	}
	return out
}

// pointRefs returns what m's catalog refers to (cached); ok is false when
// the point no longer exists.
func (g *DroppedStreams) pointRefs(m *checkpoint.Meta) (pointRefs, bool, error) {
	g.mu.Lock()
	r, hit := g.catalogs[m.Dir]
	g.mu.Unlock()
	if hit && r.id == m.ID {
		return r, true, nil
	}
	st, err := storage.OpenReadOnly(filepath.Join(m.Dir, checkpoint.StateDir), m.Backend == "memory")
	if err != nil {
		if again, rerr := checkpoint.ReadMeta(m.Dir); rerr != nil || again.ID != m.ID {
			return pointRefs{}, false, nil
		}
		return pointRefs{}, false, err
	}
	descs, err := storage.Descriptors(st.DB())
	st.Close()
	if err != nil {
		return pointRefs{}, false, err
	}
	r = pointRefs{id: m.ID, streams: map[string]bool{}, subjects: map[string]bool{}}
	for _, d := range descs {
		if d.Kind == catalog.KindStream || d.Kind == catalog.KindTable {
			r.streams[d.JSStream] = true
			r.subjects[d.Subject] = true
		}
	}
	g.mu.Lock()
	g.catalogs[m.Dir] = r
	g.mu.Unlock()
	return r, true, nil
}

// discover adds to the pending set this server's table streams that no
// live object reads: tables an earlier run dropped while a checkpoint or
// savepoint still held them.
func (g *DroppedStreams) discover(ctx context.Context) error {
	owner, err := g.Owner()
	if err != nil {
		return err
	}
	owned, err := g.cfg.Broker.OwnedTableStreams(ctx, owner)
	if err != nil {
		return err
	}
	live := map[string]bool{}
	for _, d := range g.cfg.Live() {
		live[d.JSStream] = true
	}
	for js, subj := range owned {
		if !live[js] {
			g.Note(js, subj)
		}
	}
	return nil
}

// ownerFile, in the data directory, holds the random id this server marks
// the JetStream streams of its tables with (broker.OwnerMetadataKey).
const ownerFile = "jetstream-owner"

// Owner returns this server's id, which marks the JetStream streams of
// its tables, creating it on first use.
func (g *DroppedStreams) Owner() (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.owner != "" {
		return g.owner, nil
	}
	path := filepath.Join(g.cfg.DataDir, ownerFile)
	data, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(data))) > 0 {
		g.owner = strings.TrimSpace(string(data))
		return g.owner, nil
	}
	if err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", err
	}
	owner := hex.EncodeToString(id[:])
	tmp, err := os.CreateTemp(g.cfg.DataDir, ownerFile+".tmp*")
	if err != nil {
		return "", err
	}
	_, err = tmp.WriteString(owner + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	g.owner = owner
	return owner, nil
}
