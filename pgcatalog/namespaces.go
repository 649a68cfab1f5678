package pgcatalog

import (
	"strings"

	"streamdb/expr"
	"streamdb/types"
)

// The schemas (pg_namespace) and the system relations' own rows of
// pg_class. Every user object lives in schema public; the system tables
// are in pg_catalog or information_schema.

const (
	// NamespacePublic and NamespaceInfoSchema are the OIDs of schemas
	// public and information_schema (NamespacePgCatalog is pg_catalog's).
	NamespacePublic     = 2200
	NamespaceInfoSchema = 13000
	// FirstUserOID is PostgreSQL's FirstNormalObjectId: a user
	// relation's OID is FirstUserOID plus its catalog ID, so it is
	// stable across restarts.
	FirstUserOID = 16384
	// firstSystemRelOID numbers the pg_catalog relations that have no
	// OID of PostgreSQL's, in name order.
	firstSystemRelOID = 14000
	// DatabaseOwnerOID is the OID of PostgreSQL's role
	// pg_database_owner, which owns schema public.
	DatabaseOwnerOID = 6171
	// BootstrapUser is the bootstrap superuser's name (OID 10), which
	// owns the system objects.
	BootstrapUser = "streamdb"
	// DatabaseName is the database's name in the catalogs (pg_database,
	// information_schema's table_catalog): the server has one database,
	// which clients may connect to under any name.
	DatabaseName = "streamdb"
)

// SystemRelOIDs are PostgreSQL's OIDs of its system catalogs.
var SystemRelOIDs = map[string]int64{
	"pg_type": 1247, "pg_attribute": 1249, "pg_proc": 1255, "pg_class": 1259, "pg_database": 1262,
	"pg_am": 2601, "pg_attrdef": 2604, "pg_constraint": 2606, "pg_description": 2609, "pg_index": 2610,
	"pg_namespace": 2615, "pg_extension": 3079,
	"pg_tablespace": 1213, "pg_sequence": 2224, "pg_cast": 2605, "pg_depend": 2608, "pg_inherits": 2611,
	"pg_language": 2612, "pg_opclass": 2616, "pg_operator": 2617, "pg_rewrite": 2618, "pg_trigger": 2620,
	"pg_opfamily": 2753, "pg_policy": 3256, "pg_init_privs": 3394, "pg_collation": 3456, "pg_event_trigger": 3466,
	"pg_default_acl": 826, "pg_foreign_data_wrapper": 2328, "pg_foreign_server": 1417, "pg_publication": 6104,
	"pg_subscription": 6100, "pg_largeobject_metadata": 2995, "pg_transform": 3576, "pg_conversion": 2607,
}

// A SystemRelation is a system table as pg_class lists it: relkind 'v',
// as the tables are computed on every read, as views are, so tools that
// browse system objects see them and 'pg_class'::regclass names a row of
// pg_class.
type SystemRelation struct {
	OID       int64
	Name      string // without its schema
	Namespace int64
	Columns   []types.Column
}

// SystemRelations lists the system tables, this package's and e's own,
// by qualified name. Their OIDs are PostgreSQL's for the catalogs that
// have fixed ones (pg_class is 1259), else numbers below FirstUserOID
// given in name order.
func SystemRelations(e Engine) []SystemRelation {
	names, columns := systemTableNames(e)
	var rels []SystemRelation
	for n, name := range names {
		schema, rel, _ := strings.Cut(name, ".")
		ns := int64(NamespacePgCatalog)
		if schema == "information_schema" {
			ns = NamespaceInfoSchema
		}
		oid, ok := SystemRelOIDs[rel]
		switch {
		case ns == NamespaceInfoSchema:
			oid = expr.InfoSchemaRelOIDs + int64(n) // in name order
		case !ok:
			oid = int64(firstSystemRelOID + n)
		}
		rels = append(rels, SystemRelation{OID: oid, Name: rel, Namespace: ns, Columns: columns[name]})
	}
	return rels
}

// SystemRelationOID is the pg_class OID of the system table name
// (qualified, or in pg_catalog), 0 for none.
func SystemRelationOID(e Engine, name string) int64 {
	schema, rel, _ := strings.Cut(Qualify(name), ".")
	ns := int64(NamespacePgCatalog)
	if schema == "information_schema" {
		ns = NamespaceInfoSchema
	}
	for _, r := range SystemRelations(e) {
		if r.Name == rel && r.Namespace == ns {
			return r.OID
		}
	}
	return 0
}
