package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/metrics"
	"streamdb/storage"
)

// Settings are the checkpoint settings (execution.checkpointing.* and
// state.*, named after Flink's; see config.Settings); the
// coordinator reads them afresh for every decision, so changes made with
// SET / ALTER SYSTEM SET apply at once.
type Settings struct {
	Interval          time.Duration // 0: no periodic checkpoints
	MinPause          time.Duration
	Timeout           time.Duration
	MaxConcurrent     int
	TolerableFailures int
	NumRetained       int
	// RetainOnCancellation keeps checkpoints at clean shutdown and DROP.
	RetainOnCancellation bool
	Async                bool
	Incremental          bool
	// ViewGroups: each checkpoint also exports every view-group
	// (group_export.go), once the coordinator has the catalog.
	ViewGroups    bool
	Backend       string // "pebble" or "memory"
	MemoryLimit   int64  // memory backend: largest snapshot, bytes
	Dir           string
	SavepointsDir string
	// DataDir holds the checkpoint record (RecordFile).
	DataDir string
	// Fence, when set, runs just before a checkpoint or savepoint is
	// committed (its metadata written): an error leaves it uncommitted. A
	// server of an --ha-group proves there that it still holds the lease,
	// so a server that lost it never commits a checkpoint.
	Fence func() error
}

// Coordinator schedules, takes and retires checkpoints.
type Coordinator struct {
	settings func() Settings
	store    *storage.Store
	epochs   EpochSource
	log      *slog.Logger
	// durable is DurableEpoch's value.
	durable atomic.Uint64

	mu        sync.Mutex
	nextID    uint64
	history   []*Meta // newest last; in-progress, failed and aborted ones too
	inflight  int
	lastEnd   time.Time
	failures  int // consecutive
	pinned    map[string]int
	sums      map[string]File // CRC cache of immutable sstables by name
	slotFreed chan struct{}

	cancel context.CancelFunc
	wg     sync.WaitGroup
	// exclusive is held shared by every checkpoint being taken and
	// exclusively by a rollback.
	exclusive sync.RWMutex
	// writers counts checkpoint writers, which may outlive a timed-out
	// Take; stopped refuses new ones.
	writers sync.WaitGroup
	stopped bool
	// testHook, when set, runs after the Pebble checkpoint and before the
	// metadata is written (tests use it to provoke timeouts and crashes).
	testHook func(dir string)

	// dataDir and rec: the checkpoint record (RecordFile); recMu guards
	// rec, which is replaced, never changed in place.
	dataDir string
	recMu   sync.Mutex
	rec     *Record

	// periodic sums the periodic checkpoints completed since the last
	// summary line; guarded by mu.
	periodic periodicSummary

	// afterCheckpoint runs after each completed checkpoint (purge.go).
	afterCheckpoint atomic.Pointer[func(*Meta)]

	// remote: the object store buckets checkpoints and savepoints are
	// uploaded to (remote_coord.go).
	remote remoteCopies

	// catalog, when set, lists the live catalog: each checkpoint then
	// exports its view-groups (group_export.go).
	catalog atomic.Pointer[func() []*catalog.Descriptor]
}

// NewCoordinator reads the server's checkpoint record (RecordFile in
// s.DataDir, created on first start) and scans every directory it lists
// for the server's own checkpoints.
func NewCoordinator(settings func() Settings, store *storage.Store, epochs EpochSource, log *slog.Logger) (*Coordinator, error) {
	c := &Coordinator{settings: settings, store: store, epochs: epochs, log: log,
		pinned: map[string]int{}, sums: map[string]File{}, slotFreed: make(chan struct{}, 1)}
	s := settings()
	c.dataDir = s.DataDir
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create checkpoint directory: %w", err)
	}
	rec, err := openRecord(s.DataDir)
	if err != nil {
		return nil, err
	}
	c.rec = rec
	if err := c.noteDir(s.Dir); err != nil {
		return nil, err
	}
	RemoveReleased(s.SavepointsDir)
	storage.RemovePrivateOpens(s.Dir)
	storage.RemovePrivateOpens(s.SavepointsDir)
	if rec.LastDDL != nil {
		c.nextID = rec.LastDDL.ID
	}
	// Ids grow across every directory the server has used, so that the
	// newest checkpoint is the one with the largest id wherever it is.
	for _, dir := range recordDirs(rec, s.Dir, s.SavepointsDir) {
		metas, err := List(dir)
		if err != nil {
			return nil, err
		}
		for _, m := range metas {
			c.nextID = max(c.nextID, m.ID)
			if m.Kind == KindCheckpoint && c.owns(m) {
				c.history = append(c.history, m)
			}
		}
		// Directories without metadata are checkpoints that never
		// completed (a crash mid-way): remove the server's own, and count
		// every such name's id as used.
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			var id uint64
			if _, err := fmt.Sscanf(e.Name(), "chk-%d", &id); err != nil || !e.IsDir() {
				continue
			}
			c.nextID = max(c.nextID, id)
			path := filepath.Join(dir, e.Name())
			if _, err := os.Stat(filepath.Join(path, MetadataFile)); os.IsNotExist(err) && (ownerOf(path) == rec.Instance || c.dataDir == "") {
				log.Warn("removing incomplete checkpoint", "dir", e.Name(), "path", path)
				os.RemoveAll(path)
			}
		}
	}
	sort.Slice(c.history, func(i, j int) bool { return c.history[i].ID < c.history[j].ID })
	return c, nil
}

// owns reports whether this server made m.
func (c *Coordinator) owns(m *Meta) bool { return owns(c.rec.Instance, c.dataDir, m) }

// noteDir adds dir to the record's directories (durably) if it is new.
func (c *Coordinator) noteDir(dir string) error {
	dir = absDir(dir)
	c.recMu.Lock()
	defer c.recMu.Unlock()
	if slices.Contains(c.rec.Dirs, dir) {
		return nil
	}
	next := *c.rec
	next.Dirs = append(slices.Clip(c.rec.Dirs), dir)
	if err := writeRecord(c.dataDir, &next); err != nil {
		return fmt.Errorf("record checkpoint directory %s in %s: %w", dir, RecordFile, err)
	}
	c.rec = &next
	return nil
}

// noteDDL records m as the checkpoint of the newest catalog change, which
// recovery must not go back behind.
func (c *Coordinator) noteDDL(m *Meta) error {
	c.recMu.Lock()
	defer c.recMu.Unlock()
	if c.rec.LastDDL != nil && c.rec.LastDDL.ID >= m.ID {
		return nil
	}
	next := *c.rec
	next.LastDDL = &RecordPoint{ID: m.ID, Epoch: m.Epoch, Dir: absDir(m.Dir), Trigger: m.Trigger, CompletedAt: m.CompletedAt}
	if err := writeRecord(c.dataDir, &next); err != nil {
		return fmt.Errorf("record checkpoint %d in %s: %w", m.ID, RecordFile, err)
	}
	c.rec = &next
	return nil
}

// Start runs periodic checkpoints.
func (c *Coordinator) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		var lastStart time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			s := c.settings()
			now := time.Now()
			c.mu.Lock()
			due := periodicDue(s, now, lastStart, c.lastEnd, c.inflight)
			c.mu.Unlock()
			if !due {
				continue
			}
			lastStart = now
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				if _, err := c.Take(ctx, TriggerPeriodic); err != nil && ctx.Err() == nil {
					c.log.Warn("periodic checkpoint failed", "err", err)
				}
			}()
		}
	}()
}

// periodicDue reports whether a periodic checkpoint may start at now, as
// Flink schedules them: execution.checkpointing.interval after the start of
// the previous periodic one (0 turns them off), min-pause after the end of
// the previous checkpoint of any kind, and fewer than
// max-concurrent-checkpoints in progress.
func periodicDue(s Settings, now, lastStart, lastEnd time.Time, inflight int) bool {
	if s.Interval <= 0 || now.Sub(lastStart) < s.Interval {
		return false
	}
	return inflight < max(1, s.MaxConcurrent) && now.Sub(lastEnd) >= s.MinPause
}

// StopPeriodic ends periodic checkpoints; Take still works.
func (c *Coordinator) StopPeriodic() {
	if c.cancel != nil {
		c.cancel()
	}
	c.wg.Wait()
}

// Stop ends periodic checkpoints, refuses new ones and waits for every
// checkpoint still being written (the store must outlive them).
func (c *Coordinator) Stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
	c.wg.Wait()
	c.writers.Wait()
}

// ErrStopped is returned for checkpoints asked for during shutdown.
var ErrStopped = errors.New("the server is shutting down")

// Healthy reports whether fewer checkpoints than tolerated failed in a row.
func (c *Coordinator) Healthy() (bool, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failures <= c.settings().TolerableFailures, c.failures
}

// DurableEpoch is the newest epoch a checkpoint or savepoint completed
// by this process holds (0 before the first): recovery from a crash never
// goes back past it. Sinks publish only epochs up to it.
func (c *Coordinator) DurableEpoch() uint64 { return c.durable.Load() }

// History returns every checkpoint this server knows, oldest first.
func (c *Coordinator) History() []Meta {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Meta, len(c.history))
	for i, m := range c.history {
		out[i] = *m
	}
	return out
}

// acquire waits for a checkpoint slot (max-concurrent-checkpoints).
func (c *Coordinator) acquire(ctx context.Context) error {
	for {
		c.mu.Lock()
		if c.inflight < max(1, c.settings().MaxConcurrent) {
			c.inflight++
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.slotFreed:
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (c *Coordinator) release() {
	c.mu.Lock()
	c.inflight--
	c.lastEnd = time.Now()
	c.mu.Unlock()
	select {
	case c.slotFreed <- struct{}{}:
	default:
	}
}

// Take takes one checkpoint now and returns when it is durable (or has
// failed or been aborted: then it leaves no directory behind).
func (c *Coordinator) Take(ctx context.Context, trigger string) (*Meta, error) {
	return c.take(ctx, KindCheckpoint, "", trigger)
}

// TakeSavepoint takes a savepoint: a checkpoint in the savepoints
// directory under its own name, which retention never deletes.
func (c *Coordinator) TakeSavepoint(ctx context.Context, name string) (*Meta, error) {
	return c.take(ctx, KindSavepoint, name, TriggerManual)
}

func (c *Coordinator) take(ctx context.Context, kind, name, trigger string) (*Meta, error) {
	if err := c.acquire(ctx); err != nil {
		return nil, err
	}
	defer c.release()
	c.exclusive.RLock()
	defer c.exclusive.RUnlock()
	s := c.settings()
	parent := s.Dir
	if kind == KindSavepoint {
		parent = s.SavepointsDir
	}
	// The record lists the directory before anything is written there.
	if err := c.noteDir(parent); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil, ErrStopped
	}
	c.nextID++
	m := &Meta{FormatVersion: FormatVersion, Kind: kind, Name: name, ID: c.nextID, Trigger: trigger,
		Status: StatusInProgress, Backend: s.Backend, StartedAt: time.Now().UTC(), Instance: c.rec.Instance}
	if kind == KindSavepoint {
		m.Dir = filepath.Join(s.SavepointsDir, name)
		if _, err := os.Stat(m.Dir); err == nil {
			c.mu.Unlock()
			return nil, ErrSavepointExists
		}
	} else {
		// Never write into a directory the server did not create: skip
		// names that exist (another server's, or left by hand).
		for {
			m.Dir = filepath.Join(s.Dir, fmt.Sprintf("chk-%010d", m.ID))
			err := os.Mkdir(m.Dir, 0o755)
			if err == nil {
				break
			}
			if !os.IsExist(err) {
				c.mu.Unlock()
				return nil, err
			}
			c.nextID++
			m.ID = c.nextID
		}
		c.history = append(c.history, m)
	}
	c.writers.Add(1)
	c.mu.Unlock()

	tctx := ctx
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	// The writer works on its own copy of the metadata: after a timeout it
	// may still run, and must neither race with nor complete the aborted
	// checkpoint.
	type result struct {
		meta *Meta
		err  error
	}
	done := make(chan result, 1)
	abort := make(chan struct{})
	work := *m
	go func() {
		defer c.writers.Done()
		err := c.write(&work, s, abort)
		done <- result{&work, err}
	}()
	var err error
	select {
	case r := <-done:
		err = r.err
		if err == nil {
			uploads := c.uploads(kind)
			c.mu.Lock()
			*m = *r.meta
			if uploads {
				// Not complete (for SHOW CHECKPOINTS, retention and
				// previousFiles) until its metadata is in the bucket.
				m.Status = StatusInProgress
			}
			c.mu.Unlock()
		}
	case <-tctx.Done():
		err = tctx.Err()
		close(abort)
		// Remove what the writer leaves once it returns.
		go func() { <-done; os.RemoveAll(m.Dir) }()
	}
	if err == nil {
		// Complete only once in the bucket, when one is configured.
		err = c.upload(tctx, m)
	}
	if kind == KindSavepoint {
		if err != nil {
			os.RemoveAll(m.Dir)
			m.Status = StatusFailed
			return m, err
		}
		c.log.Info("savepoint completed", "name", name, "id", m.ID, "epoch", m.Epoch, "size", m.SizeBytes)
		return m, nil
	}
	c.finish(m, s, err)
	if err != nil {
		if m.Status == StatusAborted {
			// finish worded the timeout; keep DeadlineExceeded for errors.Is.
			err = fmt.Errorf("%s: %w", m.Error, context.DeadlineExceeded)
		}
		return m, err
	}
	if trigger == TriggerDDL || trigger == TriggerRollback {
		// Acknowledged catalog changes: recovery must not go behind this.
		if err := c.noteDDL(m); err != nil {
			return m, err
		}
	}
	c.retainRemote(s.NumRetained)
	c.notifyCompleted(m)
	return m, nil
}

// Exclusive runs fn while no checkpoint or savepoint is being taken
// (rollback replaces all state under it).
func (c *Coordinator) Exclusive(fn func() error) error {
	c.exclusive.Lock()
	defer c.exclusive.Unlock()
	return fn()
}

// ErrSavepointExists is returned for a savepoint name already in use.
var ErrSavepointExists = errors.New("savepoint already exists")

// write produces the checkpoint directory and, last, its metadata.
func (c *Coordinator) write(m *Meta, s Settings, abort <-chan struct{}) error {
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return err
	}
	// The owner file marks the directory as this server's from the start,
	// so that startup may remove it if it never completes. It is listed
	// and checksummed with the rest, so it must be on disk before the
	// checkpoint counts: an empty one after a power cut would reject it.
	if err := storage.WriteFileSynced(filepath.Join(m.Dir, OwnerFile), []byte(m.Instance+"\n"), 0o644); err != nil {
		return err
	}
	if s.Backend != "memory" {
		// On a full disk the flush would wait for space (the state
		// store's writes do, storage/stallfs.go): fail now instead, to
		// be counted and retried.
		if err := c.store.SpaceError(); err != nil {
			return err
		}
		// Flushing first keeps the WAL that Checkpoint must copy short,
		// so the epoch-boundary section below stays brief.
		if err := c.store.Flush(); err != nil {
			return err
		}
	}
	var cut Cut
	// groups pins the state at the boundary for the view-groups' export,
	// which runs after the boundary is released.
	var groups *groupsAt
	// The catalog is read before the boundary, whose lock is the
	// runtime's: no lock of the catalog's is taken under it.
	var descs []*catalog.Descriptor
	if s.ViewGroups {
		descs = c.catalogNow()
	}
	defer func() {
		if groups != nil {
			groups.snap.Close()
		}
	}()
	snapshot := func(fn func() error) error {
		return c.epochs.AtEpochBoundary(func(k Cut) error {
			cut = k
			if groups == nil && descs != nil {
				groups = &groupsAt{snap: c.store.Snapshot(), descs: descs, cut: k}
			}
			start := time.Now()
			defer func() { m.Pause = Duration(time.Since(start)) }()
			return fn()
		})
	}
	stateDir := filepath.Join(m.Dir, StateDir)
	var err error
	switch {
	case s.Backend == "memory":
		// A Pebble snapshot pins the epoch boundary in O(1); the export
		// then runs while epochs go on committing.
		var snap *pebble.Snapshot
		err = snapshot(func() error { snap = c.store.Snapshot(); return nil })
		if err != nil {
			return err
		}
		err = c.store.ExportSnapshotFrom(snap, stateDir, s.MemoryLimit)
		snap.Close()
	case s.Async:
		// Pebble picks its consistent point inside Checkpoint, and every
		// commit is a whole epoch, so no lock is needed: the cut is read
		// back from the checkpoint itself.
		var before Cut
		err = snapshot(func() error { before = cut; return nil })
		if err == nil {
			err = c.store.Checkpoint(stateDir)
		}
		if err == nil {
			cut, err = readCut(stateDir, before)
		}
	default:
		// Synchronous: hold the epoch boundary (no commits) for the whole
		// checkpoint, checksums included.
		err = snapshot(func() error {
			if err := c.store.Checkpoint(stateDir); err != nil {
				return err
			}
			return c.describe(m, cut, s)
		})
		if err == nil && groups != nil {
			err = c.exportGroups(m, groups)
			groups = nil
			if err == nil {
				err = c.describeFiles(m, filepath.Join(m.Dir, GroupsDir), s)
			}
		}
		if err == nil {
			return c.commit(m, abort)
		}
	}
	if err != nil {
		return err
	}
	// A savepoint holds copies of its files, not links to the live
	// state's: damage to a live file must not reach the point a user
	// keeps to go back to.
	if (!s.Incremental || m.Kind == KindSavepoint) && s.Backend != "memory" {
		if err := unshareSSTables(stateDir); err != nil {
			return err
		}
	}
	if groups != nil {
		err := c.exportGroups(m, groups)
		groups = nil
		if err != nil {
			return err
		}
	}
	if err := c.describe(m, cut, s); err != nil {
		return err
	}
	return c.commit(m, abort)
}

// unshareSSTables replaces the hard-linked sstables of a checkpoint by
// copies (state.backend.incremental = false: every checkpoint holds its own
// full copy of the state).
func unshareSSTables(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sst") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := storage.CopyFile(path, path+".copy"); err != nil {
			return err
		}
		if err := os.Rename(path+".copy", path); err != nil {
			return err
		}
	}
	return storage.SyncDir(dir)
}

// readCut reads the epoch and source positions that a checkpoint holds;
// names of views and sources come from a cut taken just before (sources of
// views created in between keep their stored positions without names).
func readCut(stateDir string, names Cut) (Cut, error) {
	st, err := storage.OpenReadOnly(stateDir, false)
	if err != nil {
		return Cut{}, fmt.Errorf("read back checkpoint: %w", err)
	}
	defer st.Close()
	epoch, err := st.Epoch()
	if err != nil {
		return Cut{}, err
	}
	out := Cut{Epoch: epoch}
	for _, p := range names.Positions {
		pos, err := st.Position(p.ViewID, uint16(p.Source))
		if err != nil {
			return Cut{}, err
		}
		p.Seq = pos.Seq
		out.Positions = append(out.Positions, p)
	}
	return out, nil
}

func (c *Coordinator) commit(m *Meta, abort <-chan struct{}) error {
	if c.testHook != nil {
		c.testHook(m.Dir)
	}
	select {
	case <-abort:
		return context.DeadlineExceeded // timed out: never write the marker
	default:
	}
	if fence := c.settings().Fence; fence != nil {
		if err := fence(); err != nil {
			return err
		}
	}
	// A checkpoint taken once Pebble has found damaged files may hold
	// them, checksummed as they are now: it must never be recovered from.
	if err := c.store.Damage(); err != nil {
		return fmt.Errorf("the state store is damaged: %w", err)
	}
	// Every directory entry of the checkpoint (Pebble's hard links, the
	// state directory, the checkpoint's own entry in its parent) must be
	// durable before the metadata makes the checkpoint count; describe
	// synced the files it listed.
	if err := storage.SyncTree(m.Dir); err != nil {
		return err
	}
	m.Status = StatusCompleted
	m.CompletedAt = time.Now().UTC()
	m.Duration = Duration(m.CompletedAt.Sub(m.StartedAt))
	if err := writeMeta(m.Dir, m); err != nil {
		m.Status = StatusInProgress
		return err
	}
	return nil
}

// describe fills in the cut, the file list with checksums, and sizes.
func (c *Coordinator) describe(m *Meta, cut Cut, s Settings) error {
	m.Epoch = cut.Epoch
	for _, p := range cut.Positions {
		m.Positions = append(m.Positions, Position{View: p.View, Source: p.Source, Stream: p.Stream, Subject: p.Subject, Seq: p.Seq})
	}
	return c.describeFiles(m, m.Dir, s)
}

// describeFiles adds the files under root, a directory of checkpoint m,
// to its file list with their checksums and sizes.
func (c *Coordinator) describeFiles(m *Meta, root string, s Settings) error {
	prev := map[string]File{}
	if m.Kind == KindCheckpoint {
		prev = c.previousFiles()
	}
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(m.Dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		f, ok := c.cachedSum(rel, info.Size())
		if !ok {
			// A file summed before was synced then; a new one may hold
			// data its writer did not sync (Pebble syncs its own, but
			// the checkpoint relies on every file it lists).
			if err := storage.SyncFile(path); err != nil {
				return err
			}
			crc, size, err := fileCRC(path)
			if err != nil {
				return err
			}
			f = File{Name: rel, Size: size, CRC32C: crc}
			if strings.HasSuffix(rel, ".sst") {
				c.mu.Lock()
				c.sums[rel] = f
				c.mu.Unlock()
			}
		}
		if p, ok := prev[rel]; ok && s.Incremental && p.Size == f.Size && p.CRC32C == f.CRC32C && strings.HasSuffix(rel, ".sst") {
			f.Shared = true
		} else {
			m.NewBytes += f.Size
		}
		m.SizeBytes += f.Size
		m.Files = append(m.Files, f)
		return nil
	})
}

func (c *Coordinator) cachedSum(rel string, size int64) (File, bool) {
	if !strings.HasSuffix(rel, ".sst") {
		return File{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.sums[rel]
	return f, ok && f.Size == size
}

// previousFiles returns the files of the newest completed checkpoint.
func (c *Coordinator) previousFiles() map[string]File {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]File{}
	for i := len(c.history) - 1; i >= 0; i-- {
		if c.history[i].Status == StatusCompleted {
			for _, f := range c.history[i].Files {
				out[f.Name] = f
			}
			break
		}
	}
	return out
}

// finish records the outcome, cleans up after failures and applies
// retention.
func (c *Coordinator) finish(m *Meta, s Settings, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		m.Status = StatusFailed
		if errors.Is(err, context.DeadlineExceeded) {
			m.Status = StatusAborted
			err = fmt.Errorf("not complete within execution.checkpointing.timeout (%s)", s.Timeout)
		}
		m.Error = err.Error()
		m.CompletedAt = time.Now().UTC()
		m.Duration = Duration(m.CompletedAt.Sub(m.StartedAt))
		m.Files = nil
		os.RemoveAll(m.Dir)
		c.failures++
		metrics.CheckpointsFailed.Inc()
		level := slog.LevelWarn
		if c.failures > s.TolerableFailures {
			level = slog.LevelError
		}
		c.log.Log(context.Background(), level, "checkpoint failed", "id", m.ID, "status", m.Status, "err", err,
			"consecutive_failures", c.failures, "tolerable", s.TolerableFailures)
		return
	}
	c.failures = 0
	if m.Epoch > c.durable.Load() {
		c.durable.Store(m.Epoch)
	}
	metrics.CheckpointsCompleted.Inc()
	metrics.CheckpointDuration.Observe(time.Duration(m.Duration).Seconds())
	metrics.CheckpointSize.Set(float64(m.SizeBytes))
	metrics.CheckpointNewBytes.Set(float64(m.NewBytes))
	level := slog.LevelInfo
	if m.Trigger == TriggerPeriodic {
		// Periodic checkpoints come every few seconds: each at debug,
		// and a summary at info once a minute (logPeriodicSummary).
		level = slog.LevelDebug
		c.periodic.note(m)
	}
	c.log.Log(context.Background(), level, "checkpoint completed", "id", m.ID, "epoch", m.Epoch, "trigger", m.Trigger,
		"duration", time.Duration(m.Duration), "pause", time.Duration(m.Pause), "size", m.SizeBytes, "new_bytes", m.NewBytes)
	c.periodic.logDue(c.log, time.Now())
	c.retainLocked(s)
}

// retainLocked deletes completed checkpoints beyond num-retained, oldest
// first, never one that is pinned (a running restore reads it).
func (c *Coordinator) retainLocked(s Settings) {
	var completed []*Meta
	for _, m := range c.history {
		if m.Status == StatusCompleted {
			completed = append(completed, m)
		}
	}
	excess := len(completed) - max(1, s.NumRetained)
	for _, m := range completed {
		if excess <= 0 {
			break
		}
		if c.pinned[m.Dir] > 0 {
			continue
		}
		if err := os.RemoveAll(m.Dir); err != nil {
			c.log.Warn("delete old checkpoint", "dir", m.Dir, "err", err)
			continue
		}
		m.Status = "deleted"
		excess--
	}
	// Keep the in-memory history bounded: drop deleted entries beyond 100.
	if len(c.history) > 100 {
		c.history = c.history[len(c.history)-100:]
	}
}

// DeleteAll removes every completed checkpoint (delete_on_cancellation).
func (c *Coordinator) DeleteAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.history {
		if m.Status == StatusCompleted && c.pinned[m.Dir] == 0 {
			os.RemoveAll(m.Dir)
			m.Status = "deleted"
		}
	}
}

// List returns the completed checkpoints in dir (by metadata presence,
// without verifying files), oldest first.
func List(dir string) ([]*Meta, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Meta
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		m, err := ReadMeta(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
