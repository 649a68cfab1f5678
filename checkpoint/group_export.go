package checkpoint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
	"streamdb/cluster"
	"streamdb/storage"
)

// GroupsDir is the subdirectory of a checkpoint that holds its view-groups'
// task manifests, their span files and, written last, GlobalManifestFile.
const GroupsDir = "groups"

// GlobalManifestFile names every task manifest of a checkpoint.
const GlobalManifestFile = "MANIFEST.json"

// SetCatalog gives the coordinator the live catalog, so that each
// checkpoint also exports its view-groups (group_export.go); without it
// checkpoints hold the whole state only.
func (c *Coordinator) SetCatalog(objects func() []*catalog.Descriptor) {
	c.catalog.Store(&objects)
}

// groupsAt is what a checkpoint exports of its view-groups: a snapshot
// taken at the checkpoint's epoch boundary, the catalog then and the names
// of the sources' positions.
type groupsAt struct {
	snap  *pebble.Snapshot
	descs []*catalog.Descriptor
	cut   Cut
}

// catalogNow returns the live catalog, or nil without one (SetCatalog).
func (c *Coordinator) catalogNow() []*catalog.Descriptor {
	objects := c.catalog.Load()
	if objects == nil {
		return nil
	}
	return (*objects)()
}

// exportGroups writes, from the snapshot g pinned, one sstable per key
// span and one task manifest per view-group into m.Dir/groups, then the
// global manifest naming them all. The snapshot holds whole epochs, so
// every group's spans and cuts are of one epoch, the same for all groups.
func (c *Coordinator) exportGroups(m *Meta, g *groupsAt) error {
	defer g.snap.Close()
	dir := filepath.Join(m.Dir, GroupsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	epoch, err := storage.EpochAt(g.snap)
	if err != nil {
		return err
	}
	byName := map[string]*catalog.Descriptor{}
	for _, d := range g.descs {
		byName[d.Name] = d
	}
	global := cluster.GlobalManifest{V: cluster.ManifestVersion, Checkpoint: m.ID, Epoch: epoch}
	var all []cluster.TaskView
	for _, grp := range cluster.Groups(g.descs) {
		task := cluster.TaskManifest{V: cluster.ManifestVersion, Group: grp.ID, Checkpoint: m.ID, Epoch: epoch}
		for _, name := range grp.Views {
			d := byName[name]
			task.Views = append(task.Views, cluster.TaskView{Name: name, ID: d.ID, Layout: cluster.LayoutDigest(d)})
		}
		task.Catalog = cluster.CatalogDigest(task.Views)
		all = append(all, task.Views...)
		if task.Spans, err = c.exportSpans(g.snap, dir, grp.ID, task.Views); err != nil {
			return err
		}
		if task.Cuts, err = groupCuts(g.snap, g.cut, task.Views); err != nil {
			return err
		}
		data, err := json.MarshalIndent(&task, "", "  ")
		if err != nil {
			return err
		}
		name := fmt.Sprintf("task-%d.json", grp.ID)
		if err := storage.WriteFileSynced(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
		global.Tasks = append(global.Tasks, cluster.TaskRef{Group: grp.ID, Views: grp.Views, File: name, SHA256: cluster.Digest(data)})
	}
	global.Catalog = cluster.CatalogDigest(all)
	// Last: the global manifest's presence means every task manifest
	// named in it is on disk.
	return writeJSONAtomic(dir, GlobalManifestFile, &global)
}

// exportSpans writes the keys of the views' objects, span by span in key
// order, to sstables named after group and span.
func (c *Coordinator) exportSpans(snap *pebble.Snapshot, dir string, group uint32, views []cluster.TaskView) ([]cluster.SpanFile, error) {
	var spans [][2][]byte
	for _, v := range views {
		spans = append(spans, storage.ObjectSpans(v.ID)...)
	}
	sortSpans(spans)
	out := make([]cluster.SpanFile, 0, len(spans))
	for i, sp := range spans {
		f := cluster.SpanFile{Start: sp[0], End: sp[1]}
		// Not ".sst": the coordinator caches the checksums of sstables by
		// name, as Pebble never rewrites one; these are rewritten each time.
		name := fmt.Sprintf("g%d-%03d.span", group, i)
		path := filepath.Join(dir, name)
		keys, err := c.store.ExportSpan(snap, sp[0], sp[1], path)
		if err != nil {
			return nil, fmt.Errorf("export the state of view-group %d: %w", group, err)
		}
		if keys > 0 {
			sum, size, err := fileSHA256(path)
			if err != nil {
				return nil, err
			}
			f.File, f.Keys, f.Size, f.SHA256 = name, keys, size, sum
		}
		out = append(out, f)
	}
	return out, nil
}

// groupCuts reads from snap where each source of the group's views stood:
// the sources are those cut names, the positions those snap holds.
func groupCuts(snap *pebble.Snapshot, cut Cut, views []cluster.TaskView) ([]cluster.SourceCut, error) {
	ids := map[uint32]bool{}
	for _, v := range views {
		ids[v.ID] = true
	}
	var out []cluster.SourceCut
	for _, p := range cut.Positions {
		if !ids[p.ViewID] {
			continue
		}
		pos, err := storage.PositionAt(snap, p.ViewID, uint16(p.Source))
		if err != nil {
			return nil, err
		}
		out = append(out, cluster.SourceCut{View: p.View, Source: p.Source, Stream: p.Stream, Subject: p.Subject, Seq: pos.Seq})
	}
	return out, nil
}
