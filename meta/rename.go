package meta

import "streamdb/catalog"

// CommitRename writes d under its new name in place of old, with others
// (descriptors whose definitions name it: other tables' foreign keys),
// and restarts the dataflows from the committed epoch, so that the
// running pipeline, its logs and metrics carry the new name: queries wait
// (stateMu) and checkpoints pause while it runs. The caller holds ddlMu
// and has checked that no view reads old.
func (x *DDL) CommitRename(old, d *catalog.Descriptor, others ...*catalog.Descriptor) error {
	x.cfg.StateMu.Lock()
	defer x.cfg.StateMu.Unlock()
	return x.cfg.Coord.Exclusive(func() error {
		x.cfg.Runtime.StopAll()
		x.cfg.ResetTables()
		defer x.cfg.Runtime.StartDeferred()
		committed := x.cfg.Catalog.Rename(old.Name, append([]*catalog.Descriptor{d}, others...)...)
		if err := x.cfg.Reload(); err != nil {
			return err
		}
		return committed
	})
}
