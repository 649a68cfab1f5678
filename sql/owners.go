package sql

import "streamdb/catalog"

// roleOIDs maps every role's name to its oid (the bootstrap superuser's
// is 10), for the catalogs' owner columns.
func (e *Engine) roleOIDs() map[string]int64 {
	oids := map[string]int64{}
	for _, r := range e.roleRows() {
		oids[r.name] = r.oid
	}
	return oids
}

// ownerOID is the oid of the role that owns d (pg_class.relowner), so
// that pg_dump writes ALTER ... OWNER TO that role.
func (e *Engine) ownerOID(oids map[string]int64, d *catalog.Descriptor) int64 {
	if oid, ok := oids[e.roles.Owner(d)]; ok {
		return oid
	}
	return 10
}
