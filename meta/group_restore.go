package meta

import (
	"errors"
	"os"
	"path/filepath"
	"slices"

	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/cluster"
	"streamdb/sqlerr"
)

// ExportGroups makes every checkpoint export its view-groups, each with
// its own task manifest (checkpoint.SetCatalog); objects lists the live
// catalog.
func (n *Node) ExportGroups(objects func() []*catalog.Descriptor) {
	n.n.Coordinator().SetCatalog(objects)
}

// GroupRestore is one view-group of a checkpoint, read and checked
// against this server's catalog, ready to replace the group's state.
type GroupRestore struct {
	dir  string
	task *cluster.TaskManifest
	// Roots are the group's views that read no other view: stopping
	// them stops the rest of the group, and starting them again starts
	// it (exec's orphans), each from its restored state.
	Roots []string
	// Epoch is the epoch of the checkpoint's server the state holds.
	Epoch uint64
}

// ReadGroup reads the view-group holding view from the checkpoint
// directory dir (another server's) and checks it: its digests, and that
// this server's catalog (descs) holds the same views with the same ids and
// state layouts.
func (n *Node) ReadGroup(dir, view string, descs []*catalog.Descriptor) (*GroupRestore, error) {
	dir, err := n.restoreDir(dir)
	if err != nil {
		return nil, err
	}
	task, err := checkpoint.ReadGroup(dir, view)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, sqlerr.New(sqlerr.UndefinedFile, "cannot restore from %s: %v", dir, err).
			WithHint("Name the directory of a checkpoint (chk-...) taken by a server that exports view-groups.")
	case errors.Is(err, checkpoint.ErrGroupMismatch):
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot restore from %s: %v", dir, err)
	case err != nil:
		// A digest that does not match, a manifest that does not decode.
		return nil, sqlerr.New(sqlerr.DataCorrupted, "cannot restore from %s: %v", dir, err).
			WithHint("Restore from another checkpoint: this one's view-group files are damaged.")
	}
	if err := checkpoint.CheckGroupCatalog(task, descs); err != nil {
		return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot restore the view-group of %s: %v", view, err)
	}
	g := &GroupRestore{dir: dir, task: task, Epoch: task.Epoch}
	for _, grp := range cluster.Groups(descs) {
		if grp.ID == task.Group || slices.Contains(grp.Views, view) {
			g.Roots = cluster.Roots(grp, descs)
		}
	}
	return g, nil
}

// RestoreGroup replaces the state of g's views by the checkpoint's. The
// caller has stopped their dataflows; no checkpoint is taken meanwhile
// (the coordinator's Exclusive), so none holds the group half restored.
func (n *Node) RestoreGroup(g *GroupRestore) error {
	return n.n.Coordinator().Exclusive(func() error {
		return checkpoint.RestoreGroup(n.n.Store(), g.dir, g.task)
	})
}

// restoreDir resolves the directory a client named for RESTORE GROUP:
// relative to the data directory, and, with symbolic links followed, in
// or below it. A client may not make the server read files outside its
// own directories, so another server's checkpoint is copied (or
// downloaded) under this server's data directory first.
func (n *Node) restoreDir(dir string) (string, error) {
	data := n.DataDir()
	outside := sqlerr.New(sqlerr.InsufficientPrivilege, "cannot restore from %s: the directory must be in or below the data directory", dir).
		WithHint("Copy the checkpoint's directory (chk-...) under the server's data directory, e.g. to restore/, and name it relative to the data directory.")
	if data == "" {
		return "", outside
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(data, dir)
	}
	if !checkpoint.Within(dir, data) {
		return "", outside
	}
	root, err := filepath.EvalSymlinks(data)
	if err != nil {
		return "", err
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", sqlerr.New(sqlerr.UndefinedFile, "cannot restore from %s: %v", dir, err).
			WithHint("Name the directory of a checkpoint (chk-...) taken by a server that exports view-groups.")
	}
	if !checkpoint.Within(resolved, root) {
		return "", outside
	}
	return resolved, nil
}
