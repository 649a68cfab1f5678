package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"streamdb/catalog"
	"streamdb/cluster"
	"streamdb/storage"
)

// ErrGroupMismatch is returned when a checkpoint's group cannot be
// restored into this server: a view the checkpoint lacks, spans that are
// not its views', or views whose ids or layouts differ from the live
// catalog's.
var ErrGroupMismatch = errors.New("the checkpoint's view-group does not match")

// ErrGroupDigest is returned when a group's manifest or span file does
// not have the digest the manifest naming it records: it is damaged or
// was changed, and is never restored.
var ErrGroupDigest = errors.New("a file of the checkpoint's view-group does not match its digest")

// ReadGroup reads and checks the task manifest of the view-group holding
// view in the checkpoint at dir: the global manifest must exist (the
// export completed), the task manifest must have the digest the global
// manifest names, and every span file the digest its task manifest
// names.
func ReadGroup(dir, view string) (*cluster.TaskManifest, error) {
	gdir := filepath.Join(dir, GroupsDir)
	data, err := os.ReadFile(filepath.Join(gdir, GlobalManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s holds no view-group manifest (a checkpoint taken before groups were exported, or one whose export did not complete): %w", dir, os.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	global, err := cluster.DecodeGlobalManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	ref, ok := global.Task(view)
	if !ok {
		return nil, fmt.Errorf("checkpoint %s holds no materialized view %s: %w", dir, view, ErrGroupMismatch)
	}
	if filepath.Base(ref.File) != ref.File {
		return nil, fmt.Errorf("%s: task manifest name %q is not a file name: %w", dir, ref.File, ErrGroupMismatch)
	}
	data, err = os.ReadFile(filepath.Join(gdir, ref.File))
	if err != nil {
		return nil, err
	}
	if got := cluster.Digest(data); got != ref.SHA256 {
		return nil, fmt.Errorf("%s: task manifest %s has digest %s, the global manifest names %s: %w", dir, ref.File, got, ref.SHA256, ErrGroupDigest)
	}
	task, err := cluster.DecodeTaskManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if err := checkSpansOwned(task); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	for _, s := range task.Spans {
		if s.File == "" {
			continue
		}
		if filepath.Base(s.File) != s.File {
			return nil, fmt.Errorf("%s: span file name %q is not a file name: %w", dir, s.File, ErrGroupMismatch)
		}
		sum, size, err := fileSHA256(filepath.Join(gdir, s.File))
		if err != nil {
			return nil, err
		}
		if sum != s.SHA256 || size != s.Size {
			return nil, fmt.Errorf("%s: span file %s has digest %s (%d bytes), its task manifest names %s (%d bytes): %w", dir, s.File, sum, size, s.SHA256, s.Size, ErrGroupDigest)
		}
	}
	return task, nil
}

// checkSpansOwned checks that the task's spans are exactly the spans of
// its views' objects: a restore replaces those keys and no other.
func checkSpansOwned(task *cluster.TaskManifest) error {
	var want [][2][]byte
	for _, v := range task.Views {
		want = append(want, storage.ObjectSpans(v.ID)...)
	}
	sortSpans(want)
	if len(want) != len(task.Spans) {
		return fmt.Errorf("task manifest of group %d: %d spans, its views own %d: %w", task.Group, len(task.Spans), len(want), ErrGroupMismatch)
	}
	for i, s := range task.Spans {
		if !bytes.Equal(s.Start, want[i][0]) || !bytes.Equal(s.End, want[i][1]) {
			return fmt.Errorf("task manifest of group %d: span %d is not one of its views' spans: %w", task.Group, i, ErrGroupMismatch)
		}
	}
	return nil
}

// CheckGroupCatalog checks that the live catalog holds task's view-group
// as the checkpoint does: the same views with the same ids and state
// layouts, and no other view in the group (descs is the live catalog).
func CheckGroupCatalog(task *cluster.TaskManifest, descs []*catalog.Descriptor) error {
	var live []string
	for _, g := range cluster.Groups(descs) {
		if slices.Contains(g.Views, task.Views[0].Name) {
			live = g.Views
		}
	}
	var names []string
	for _, v := range task.Views {
		names = append(names, v.Name)
	}
	if !slices.Equal(live, names) {
		return fmt.Errorf("the checkpoint's view-group is %v, this server's is %v; create the same views with the same statements first: %w", names, live, ErrGroupMismatch)
	}
	byName := map[string]*catalog.Descriptor{}
	for _, d := range descs {
		byName[d.Name] = d
	}
	for _, v := range task.Views {
		d := byName[v.Name]
		if d.ID != v.ID || cluster.LayoutDigest(d) != v.Layout {
			return fmt.Errorf("materialized view %s differs from the checkpoint's (object id %d, the checkpoint's %d, or another definition); create it with the same statement, in the same order, as on the server the checkpoint is from: %w", v.Name, d.ID, v.ID, ErrGroupMismatch)
		}
	}
	return nil
}

// RestoreGroup replaces the state of task's views in store by the
// checkpoint's at dir, span by span (storage.ReplaceSpan). The caller has
// checked task (ReadGroup, CheckGroupCatalog) and stopped the group's
// views; their state then holds task's epoch and resumes from its cuts.
// Each span is replaced atomically, the group as a whole is not: if this
// fails part-way, the views must not start before it is run again.
func RestoreGroup(store *storage.Store, dir string, task *cluster.TaskManifest) error {
	if store.Memory() {
		return errors.New("a view-group cannot be restored into the memory state backend (state.backend = 'memory'); use 'pebble'")
	}
	gdir := filepath.Join(dir, GroupsDir)
	for _, s := range task.Spans {
		path := ""
		if s.File != "" {
			path = filepath.Join(gdir, s.File)
		}
		if err := store.ReplaceSpan(s.Start, s.End, path); err != nil {
			return fmt.Errorf("restore the state of view-group %d: %w", task.Group, err)
		}
	}
	return nil
}

// sortSpans sorts disjoint spans by their start.
func sortSpans(spans [][2][]byte) {
	slices.SortFunc(spans, func(a, b [2][]byte) int { return bytes.Compare(a[0], b[0]) })
}

// fileSHA256 returns the hex SHA-256 and size of a file.
func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}
