package checkpoint

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"streamdb/storage"
)

// NewestUsable returns the newest checkpoint in dir that verifies, logging
// each newer one it skips as damaged or incomplete; nil if there is none.
func NewestUsable(dir string, log *slog.Logger) (*Meta, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "chk-") {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // zero-padded ids: newest first
	for _, n := range names {
		m, err := Verify(filepath.Join(dir, n))
		if err != nil {
			log.Warn("skipping unusable checkpoint", "dir", n, "err", err)
			continue
		}
		return m, nil
	}
	return nil, nil
}

// RestoreState replaces stateDir with the Pebble state of checkpoint m.
// Immutable sstables are hard-linked (falling back to copies across file
// systems); the WAL, MANIFEST and OPTIONS files are copied, since the
// opened database appends to them.
func RestoreState(m *Meta, stateDir string) error {
	src := filepath.Join(m.Dir, StateDir)
	tmp := stateDir + ".restoring"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("read checkpoint %s: %w", m.Dir, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		from, to := filepath.Join(src, e.Name()), filepath.Join(tmp, e.Name())
		if strings.HasSuffix(e.Name(), ".sst") {
			if err := os.Link(from, to); err == nil {
				continue
			}
		}
		if err := storage.CopyFile(from, to); err != nil {
			return err
		}
	}
	if err := storage.SyncDir(tmp); err != nil {
		return err
	}
	// Swap in the restored state only once it is complete.
	if err := os.RemoveAll(stateDir); err != nil {
		return err
	}
	if err := os.Rename(tmp, stateDir); err != nil {
		return err
	}
	return storage.SyncDir(filepath.Dir(stateDir))
}
