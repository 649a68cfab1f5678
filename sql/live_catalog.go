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

// Objects returns every object of the live catalog.
func (c liveCatalog) Objects() []*catalog.Descriptor { return c.e.catalogObjects() }

// install replaces the whole live catalog by descs (meta.CatalogLoad).
func (c liveCatalog) install(descs []*catalog.Descriptor) {
	c.e.catMu.Lock()
	defer c.e.catMu.Unlock()
	c.e.objs = map[string]*catalog.Descriptor{}
	for _, d := range descs {
		c.e.objs[d.Name] = d
	}
}

// rename puts d, the same object as old, in old's place, under d's name.
func (c liveCatalog) rename(old, d *catalog.Descriptor) {
	c.e.catMu.Lock()
	defer c.e.catMu.Unlock()
	delete(c.e.objs, old.Name)
	c.e.objs[d.Name] = d
}

// withOID returns the object whose relation OID is oid, or nil.
func (c liveCatalog) withOID(oid int64) *catalog.Descriptor {
	c.e.catMu.RLock()
	defer c.e.catMu.RUnlock()
	var found *catalog.Descriptor
	for _, o := range c.e.objs {
		if int64(firstUserOID)+int64(o.ID) == oid {
			found = o
		}
	}
	return found
}
