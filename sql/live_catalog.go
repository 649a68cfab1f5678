package sql

import "streamdb/catalog"

// liveCatalog is the engine's live catalog (objs under catMu) as meta.DDL
// keeps it in step with the stored one (meta.LiveCatalog).
type liveCatalog struct{ e *Engine }

func (c liveCatalog) Lookup(name string) (*catalog.Descriptor, bool) { return c.e.lookup(name) }

func (c liveCatalog) Set(d *catalog.Descriptor) {
	c.e.catMu.Lock()
	defer c.e.catMu.Unlock()
	c.e.objs[d.Name] = d
}

func (c liveCatalog) Delete(name string) {
	c.e.catMu.Lock()
	defer c.e.catMu.Unlock()
	delete(c.e.objs, name)
}

func (c liveCatalog) Swap(cur, next *catalog.Descriptor) bool {
	c.e.catMu.Lock()
	defer c.e.catMu.Unlock()
	if c.e.objs[cur.Name] != cur {
		return false
	}
	c.e.objs[cur.Name] = next
	return true
}
