package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// RecordFile, in the data directory, is the server's own account of its
// checkpoints, kept apart from them so that it survives changes of
// state.checkpoints.dir and state.savepoints.dir:
//
//   - instance: a random id written into every checkpoint and savepoint
//     this server makes (Meta.Instance, and OwnerFile in the directory
//     from its creation). Retention and startup cleanup delete only
//     directories that carry it, so pointing state.checkpoints.dir at a
//     directory holding other files never deletes them.
//   - dirs: every directory this server has written checkpoints or
//     savepoints to. Recovery considers all of them, not only the one
//     configured now.
//   - last_ddl: the newest checkpoint taken for an acknowledged catalog
//     change (DDL, ROLLBACK TO). Recovery never restores anything older:
//     if no usable checkpoint at least as new exists, the server refuses
//     to start instead of silently forgetting a committed CREATE or DROP.
//
// It is rewritten atomically (temporary file, fsync, rename, fsync of the
// directory) before the statement that changes it returns.
const RecordFile = "checkpoint-record.json"

// OwnerFile is created first in every checkpoint and savepoint directory
// this server writes; it holds the server's instance id, so that a
// directory left incomplete by a crash is known to be the server's own.
const OwnerFile = "_owner"

// TriggerRollback is the trigger of the checkpoint that records a ROLLBACK
// TO (sql uses the same string).
const TriggerRollback = "rollback"

// Record is the content of RecordFile.
type Record struct {
	Instance string       `json:"instance"`
	Dirs     []string     `json:"dirs"`
	LastDDL  *RecordPoint `json:"last_ddl,omitempty"`
}

// RecordPoint identifies one checkpoint.
type RecordPoint struct {
	ID          uint64    `json:"id"`
	Epoch       uint64    `json:"epoch"`
	Dir         string    `json:"dir"`
	Trigger     string    `json:"trigger"`
	CompletedAt time.Time `json:"completed_at"`
}

// readRecord reads dataDir's record; ok is false when there is none.
func readRecord(dataDir string) (rec *Record, ok bool, err error) {
	if dataDir == "" {
		return nil, false, nil
	}
	data, err := os.ReadFile(filepath.Join(dataDir, RecordFile))
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	rec = new(Record)
	if err := json.Unmarshal(data, rec); err != nil || rec.Instance == "" {
		return nil, false, fmt.Errorf("%s is damaged (%v); it records where this server's checkpoints are and which one recovery needs: restore it from a backup, or move it away and start with --restore-from <checkpoint dir>",
			filepath.Join(dataDir, RecordFile), err)
	}
	return rec, true, nil
}

// openRecord reads dataDir's record, creating one with a new instance id
// when there is none. Without a data directory the record lives in memory
// only, and the server owns everything in its configured directories (as
// before records existed).
func openRecord(dataDir string) (*Record, error) {
	rec, ok, err := readRecord(dataDir)
	if err != nil || ok {
		return rec, err
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	rec = &Record{Instance: hex.EncodeToString(id[:])}
	if err := writeRecord(dataDir, rec); err != nil {
		return nil, fmt.Errorf("write %s: %w", RecordFile, err)
	}
	return rec, nil
}

func writeRecord(dataDir string, rec *Record) error {
	if dataDir == "" {
		return nil
	}
	return writeJSONAtomic(dataDir, RecordFile, rec)
}

// absDir returns dir as a clean absolute path (as given if that fails).
func absDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return filepath.Clean(dir)
}

// Within reports whether path is dir or under it (both made absolute
// and clean first; symbolic links are not followed).
func Within(path, dir string) bool {
	rel, err := filepath.Rel(absDir(dir), absDir(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// owns reports whether m was made by the server with this instance id and
// data directory: it carries the id, or (made before instance ids
// existed) it lies inside the data directory. Without a data directory
// (no record) everything is.
func owns(instance, dataDir string, m *Meta) bool {
	if dataDir == "" {
		return true
	}
	if m.Instance != "" {
		return m.Instance == instance
	}
	return dataDir != "" && Within(m.Dir, dataDir)
}

// ownerOf returns the instance id in dir's OwnerFile, "" if none.
func ownerOf(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, OwnerFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// recordDirs is the union of the recorded directories and extra ones,
// absolute and without duplicates.
func recordDirs(rec *Record, extra ...string) []string {
	var out []string
	for _, d := range append(append([]string(nil), rec.Dirs...), extra...) {
		if d == "" {
			continue
		}
		if d = absDir(d); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// RecoveryOptions says where ChooseRecovery looks.
type RecoveryOptions struct {
	DataDir        string
	CheckpointsDir string // configured now
	SavepointsDir  string // configured now
	// PreferCheckpoint: execution.checkpointing.prefer-checkpoint-for-recovery.
	PreferCheckpoint bool
}

// ChooseRecovery picks the checkpoint or savepoint to recover from after
// an unclean stop (nil: none exists, use the live state).
//
// With a record (see RecordFile) it considers the server's own
// checkpoints in every directory it has written to, newest id first,
// skipping damaged ones; a savepoint completed after the chosen checkpoint
// is preferred unless o.PreferCheckpoint. The result is never older than
// the record's last DDL checkpoint: if nothing that new is usable, it
// returns an error that says what is missing.
//
// Without a record (a data directory from before records existed) it
// behaves as before: the newest usable checkpoint in the configured
// directory, or a newer savepoint.
func ChooseRecovery(o RecoveryOptions, log *slog.Logger) (*Meta, error) {
	rec, ok, err := readRecord(o.DataDir)
	if err != nil {
		return nil, err
	}
	if !ok {
		m, err := NewestUsable(o.CheckpointsDir, log)
		if err != nil {
			return nil, err
		}
		if !o.PreferCheckpoint {
			if sp := newestUsableSavepoint([]string{o.SavepointsDir}, func(*Meta) bool { return true }, log); sp != nil && (m == nil || sp.CompletedAt.After(m.CompletedAt)) {
				return sp, nil
			}
		}
		return m, nil
	}
	mine := func(m *Meta) bool { return owns(rec.Instance, o.DataDir, m) }
	dirs := recordDirs(rec, o.CheckpointsDir, o.SavepointsDir)
	// Candidates: the server's own chk-* directories, including those
	// whose metadata is missing or unreadable (they are skipped, and said
	// so, when newer than the one used).
	type candidate struct {
		id  uint64
		dir string
	}
	var cands []candidate
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil && !os.IsNotExist(err) {
			log.Warn("cannot list checkpoint directory", "dir", dir, "err", err)
		}
		for _, e := range entries {
			var id uint64
			if !e.IsDir() || !strings.HasPrefix(e.Name(), "chk-") {
				continue
			}
			if _, err := fmt.Sscanf(e.Name(), "chk-%d", &id); err != nil {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if m, err := ReadMeta(path); err == nil {
				if m.Kind == KindCheckpoint && mine(m) {
					cands = append(cands, candidate{m.ID, path})
				}
			} else if ownerOf(path) == rec.Instance || Within(path, o.DataDir) {
				cands = append(cands, candidate{id, path})
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].id > cands[j].id })
	var ck *Meta
	for _, c := range cands {
		v, err := Verify(c.dir)
		if err != nil {
			log.Warn("skipping unusable checkpoint", "dir", filepath.Base(c.dir), "path", c.dir, "err", err)
			continue
		}
		ck = v
		break
	}
	var sp *Meta
	if !o.PreferCheckpoint {
		sp = newestUsableSavepoint(dirs, mine, log)
	}
	need := rec.LastDDL
	enough := func(m *Meta) bool { return m != nil && (need == nil || m.ID >= need.ID) }
	if sp != nil && enough(sp) && (ck == nil || sp.CompletedAt.After(ck.CompletedAt)) {
		return sp, nil
	}
	if ck == nil && need == nil {
		return nil, nil
	}
	if enough(ck) {
		return ck, nil
	}
	newest := "none is usable"
	if ck != nil {
		newest = fmt.Sprintf("the newest usable one is checkpoint %d (epoch %d) at %s", ck.ID, ck.Epoch, ck.Dir)
	}
	why := "it is missing"
	if _, err := os.Stat(need.Dir); err == nil {
		if _, err := Verify(need.Dir); err != nil {
			why = err.Error()
		}
	}
	return nil, fmt.Errorf("cannot recover without losing a committed schema change: the last catalog change (%s) was recorded by checkpoint %d (epoch %d) at %s, and %s; no usable checkpoint is at least that new (%s). Bring that directory back (or point state.checkpoints.dir at where it is), or start with --restore-from <checkpoint or savepoint dir> to accept an older state",
		need.Trigger, need.ID, need.Epoch, need.Dir, why, newest)
}

// newestUsableSavepoint returns the most recently completed savepoint in
// dirs that keep accepts and that verifies, or nil.
func newestUsableSavepoint(dirs []string, keep func(*Meta) bool, log *slog.Logger) *Meta {
	var sps []*Meta
	for _, dir := range dirs {
		ms, err := Savepoints(dir)
		if err != nil {
			continue
		}
		for _, m := range ms {
			if keep(m) {
				sps = append(sps, m)
			}
		}
	}
	sort.Slice(sps, func(i, j int) bool { return sps[i].CompletedAt.After(sps[j].CompletedAt) })
	for _, sp := range sps {
		m, err := Verify(sp.Dir)
		if err != nil {
			log.Warn("skipping unusable savepoint", "dir", sp.Dir, "err", err)
			continue
		}
		return m
	}
	return nil
}
