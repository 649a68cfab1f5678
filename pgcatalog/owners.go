package pgcatalog

// RoleOIDs maps every role's name to its oid (the bootstrap superuser's
// is 10), for the catalogs' owner columns: pg_dump writes ALTER ...
// OWNER TO the role whose oid pg_class.relowner holds.
func RoleOIDs(e Engine) map[string]int64 {
	oids := map[string]int64{}
	for _, r := range e.Roles() {
		oids[r.Name] = r.OID
	}
	return oids
}
