package pgcatalog

import (
	"strings"

	"streamdb/types"
)

// pg_class, pg_attribute, pg_index, pg_constraint, pg_description,
// pg_attrdef, pg_am and pg_namespace: the relation catalogs, computed
// from the engine's relations.
//
// Besides the user relations (public) and their primary key indexes, pg_class
// lists the system tables themselves, in pg_catalog or information_schema,
// with relkind 'v': they are computed on every read, as views are, so tools
// that browse system objects see them and 'pg_class'::regclass names a row
// of pg_class. Their OIDs are PostgreSQL's for the catalogs that have fixed
// ones (pg_class is 1259), else fixed numbers below FirstUserOID.

// ClassRow is one row of pg_class with the facts the other catalogs need.
type ClassRow struct {
	OID       int64
	Name      string
	Namespace int64
	Kind      string // relkind
	cols      []Column
	user      *Relation // the user relation, nil for system tables and indexes
	index     *Relation // for a primary key index: its table
	hasIndex  bool
	// Owner is the role that owns the relation ("" for system tables:
	// the bootstrap superuser).
	Owner string
	// ACL is pg_class.relacl's elements ("owner=arwdDxt/owner"); nil
	// when nothing was granted (NULL: the owner's default).
	ACL []string
}

// systemClassRows lists the system tables as pg_class rows, by
// qualified name.
func systemClassRows(e Engine) []ClassRow {
	var rels []ClassRow
	for _, sr := range SystemRelations(e) {
		r := ClassRow{OID: sr.OID, Name: sr.Name, Namespace: sr.Namespace, Kind: "v"}
		for _, c := range sr.Columns {
			r.cols = append(r.cols, Column{Name: c.Name, Type: c.Type})
		}
		rels = append(rels, r)
	}
	return rels
}

// ClassRows lists every relation pg_class shows: user relations, their
// indexes, the sequences, then the system tables.
func ClassRows(e Engine) []ClassRow {
	var out []ClassRow
	for _, r := range e.Relations() {
		r := r
		hasPK := len(r.PrimaryKey) > 0
		out = append(out, ClassRow{OID: r.OID, Name: r.Name, Namespace: NamespacePublic, Kind: r.Kind,
			cols: r.Columns, user: &r, Owner: r.Owner, ACL: relationACL(r.Owner, objectGrants{r.Grants, r.GrantOrder, r.ACLSet}, false), hasIndex: hasPK || len(r.CatalogIndexes()) > 0})
		out = append(out, r.secondaryIndexClassRows()...)
		if hasPK {
			var keyCols []Column
			for _, k := range r.PrimaryKey {
				for _, c := range r.Columns {
					if c.Name == k {
						c.NotNull = false // index columns are never NOT NULL
						keyCols = append(keyCols, c)
					}
				}
			}
			out = append(out, ClassRow{OID: r.OID + PKOIDBase, Name: r.PKName(), Namespace: NamespacePublic, Kind: "i",
				cols: keyCols, index: &r, Owner: r.Owner})
		}
	}
	for _, q := range e.Sequences() {
		out = append(out, ClassRow{OID: q.OID, Name: q.Name, Namespace: NamespacePublic, Kind: "S", cols: sequenceColumns, Owner: q.Owner,
			ACL: relationACL(q.Owner, objectGrants{q.Grants, q.GrantOrder, q.ACLSet}, true)})
	}
	return append(out, systemClassRows(e)...)
}

// sequenceColumns are the columns PostgreSQL lists for a sequence.
var sequenceColumns = []Column{{Name: "last_value", Type: types.Int8, NotNull: true},
	{Name: "log_cnt", Type: types.Int8, NotNull: true}, {Name: "is_called", Type: types.Bool, NotNull: true}}

// ClassRowByName finds a pg_class row by name, optionally
// schema-qualified; an unqualified name is looked up in public, then
// pg_catalog (the search path).
func ClassRowByName(e Engine, name string) (ClassRow, bool) {
	schema, rel, qualified := strings.Cut(name, ".")
	if !qualified {
		schema, rel = "", name
	}
	var found *ClassRow
	for _, r := range ClassRows(e) {
		if r.Name != rel {
			continue
		}
		switch {
		case schema == "" && (r.Namespace == NamespacePublic || r.Namespace == NamespacePgCatalog && found == nil),
			schema == "public" && r.Namespace == NamespacePublic,
			schema == "pg_catalog" && r.Namespace == NamespacePgCatalog,
			schema == "information_schema" && r.Namespace == NamespaceInfoSchema:
			r := r
			found = &r
		}
	}
	if found == nil {
		return ClassRow{}, false
	}
	return *found, true
}

// pgSystemColumns are the system columns PostgreSQL lists in pg_attribute
// for every table and materialized view, with negative attnum (tools that
// read pg_attribute without "attnum > 0" see them, as on PostgreSQL;
// of them queries answer only xmin: scope.systemColumn).
var pgSystemColumns = []struct {
	name     string
	typ, len int64
	num      int64
	align    string
}{
	{"tableoid", 26, 4, -6, "i"}, {"cmax", 29, 4, -5, "i"}, {"xmax", 28, 4, -4, "i"},
	{"cmin", 29, 4, -3, "i"}, {"xmin", 28, 4, -2, "i"}, {"ctid", 27, 6, -1, "s"},
}

// descriptionRows are pg_description's rows: schema public's comment, as
// initdb writes it, streams saying what they are, and the comments of
// relations (objsubid 0) and their columns (objsubid the column number).
func DescriptionRows(e Engine) []types.Row {
	rows := []types.Row{{intD(NamespacePublic), intD(SystemRelOIDs["pg_namespace"]), intD(0), str("standard public schema")}}
	for _, r := range e.Relations() {
		if d := r.Description(); d != "" {
			rows = append(rows, types.Row{intD(r.OID), intD(SystemRelOIDs["pg_class"]), intD(0), str(d)})
		}
		for i, c := range r.Columns {
			if c.Comment != "" {
				rows = append(rows, types.Row{intD(r.OID), intD(SystemRelOIDs["pg_class"]), intD(int64(i + 1)), str(c.Comment)})
			}
		}
	}
	return rows
}

func init() {
	register("pg_catalog.pg_class", cols("oid", types.Int8, "relname", types.Text, "relnamespace", types.Int8, "reltype", types.Int8,
		"reloftype", types.Int8, "relowner", types.Int8, "relam", types.Int8, "relfilenode", types.Int8,
		"reltablespace", types.Int8, "relpages", types.Int4, "reltuples", types.Float4,
		"relallvisible", types.Int4, "reltoastrelid", types.Int8, "relhasindex", types.Bool,
		"relisshared", types.Bool, "relpersistence", types.Text, "relkind", types.Text,
		"relnatts", types.Int2, "relchecks", types.Int2, "relhasrules", types.Bool,
		"relhastriggers", types.Bool, "relhassubclass", types.Bool, "relrowsecurity", types.Bool,
		"relforcerowsecurity", types.Bool, "relispopulated", types.Bool, "relreplident", types.Text,
		"relispartition", types.Bool, "relrewrite", types.Int8, "relfrozenxid", types.Int8,
		"relminmxid", types.Int8, "relacl", textArray, "reloptions", types.Text, "relpartbound", types.Text),
		func(e Engine) []types.Row {
			var rows []types.Row
			fkTables := map[string]bool{}
			for _, t := range e.Relations() {
				if !t.isTable() {
					continue
				}
				for _, c := range t.Constraints {
					if c.Type == "f" {
						fkTables[t.Name], fkTables[c.RefTable] = true, true
					}
				}
			}
			oids := RoleOIDs(e)
			for _, r := range ClassRows(e) {
				owner, ok := oids[r.Owner]
				if !ok {
					owner = 10 // the bootstrap superuser
				}
				populated := r.user == nil || !r.user.Unpopulated
				am := int64(0)
				switch r.Kind {
				case "r", "m":
					am = 2 // heap
				case "i":
					am = 403 // btree
				}
				checks := 0
				if r.user != nil {
					for _, c := range r.user.Constraints {
						if c.Type == "c" {
							checks++
						}
					}
				}
				// A foreign key is kept by triggers on both its tables in
				// PostgreSQL (pg_dump looks for foreign keys only where
				// relhastriggers is set); a view has its _RETURN rule.
				triggers := r.user != nil && fkTables[r.user.Name]
				rules := r.Kind == "v" || r.Kind == "m"
				rows = append(rows, types.Row{intD(r.OID), str(r.Name), intD(r.Namespace), intD(0), intD(0), intD(owner),
					intD(am), intD(0), intD(0), intD(0), types.NewFloat(-1), intD(0), intD(0), b(r.hasIndex),
					b(false), str("p"), str(r.Kind), intD(int64(len(r.cols))), intD(int64(checks)), b(rules),
					b(triggers), b(false), b(false), b(false), b(populated), str("d"), b(false), intD(0), intD(0),
					intD(0), aclDatum(r.ACL), types.Null, types.Null})
			}
			return rows
		})
	register("pg_catalog.pg_attribute", cols("attrelid", types.Int8, "attname", types.Text, "atttypid", types.Int8, "attstattarget", types.Int4,
		"attlen", types.Int2, "attnum", types.Int2, "attndims", types.Int4, "attcacheoff", types.Int4,
		"atttypmod", types.Int4, "attbyval", types.Bool, "attalign", types.Text, "attstorage", types.Text,
		"attcompression", types.Text, "attnotnull", types.Bool, "atthasdef", types.Bool,
		"atthasmissing", types.Bool, "attidentity", types.Text, "attgenerated", types.Text,
		"attisdropped", types.Bool, "attislocal", types.Bool, "attinhcount", types.Int4,
		"attcollation", types.Int8, "attacl", types.Text, "attoptions", types.Text,
		"attfdwoptions", types.Text, "attmissingval", types.Text),
		func(e Engine) []types.Row {
			var rows []types.Row
			for _, r := range ClassRows(e) {
				for i, c := range r.cols {
					t, _ := TypeByOID(int64(c.Type.OID()))
					collation := int64(0)
					if c.Type.IsString() {
						collation = 100
					}
					rows = append(rows, types.Row{intD(r.OID), str(c.Name), intD(int64(c.Type.OID())), intD(-1),
						intD(t.Len), intD(int64(i + 1)), intD(0), intD(-1), intD(c.atttypmod()), b(t.ByVal),
						str("i"), str(AttstorageCode(c.Type)), str(""), b(c.NotNull), b(c.AttrDef() != ""), b(false),
						str(c.Identity), str(c.AttGenerated()), b(false), b(true), intD(0), intD(collation), types.Null, types.Null,
						types.Null, types.Null})
				}
				if r.Kind == "r" || r.Kind == "m" {
					for _, sc := range pgSystemColumns {
						rows = append(rows, types.Row{intD(r.OID), str(sc.name), intD(sc.typ), intD(0),
							intD(sc.len), intD(sc.num), intD(0), intD(-1), intD(-1), b(sc.len != 6),
							str(sc.align), str("p"), str(""), b(true), b(false), b(false),
							str(""), str(""), b(false), b(true), intD(0), intD(0), types.Null, types.Null,
							types.Null, types.Null})
					}
				}
			}
			return rows
		})
	register("pg_catalog.pg_index", cols("indexrelid", types.Int8, "indrelid", types.Int8, "indnatts", types.Int2, "indnkeyatts", types.Int2,
		"indisunique", types.Bool, "indnullsnotdistinct", types.Bool, "indisprimary", types.Bool,
		"indisexclusion", types.Bool, "indimmediate", types.Bool, "indisclustered", types.Bool,
		"indisvalid", types.Bool, "indcheckxmin", types.Bool, "indisready", types.Bool, "indislive", types.Bool,
		"indisreplident", types.Bool, "indkey", types.Text, "indcollation", types.Text, "indclass", types.Text,
		"indoption", types.Text, "indexprs", types.Text, "indpred", types.Text),
		func(e Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.Relations() {
				n := len(r.PrimaryKey)
				if n == 0 {
					continue
				}
				zeros := strings.TrimSpace(strings.Repeat("0 ", n))
				rows = append(rows, types.Row{intD(r.OID + PKOIDBase), intD(r.OID), intD(int64(n)),
					intD(int64(n)), b(true), b(false), b(true), b(false), b(true), b(false), b(true), b(false),
					b(true), b(true), b(false), str(r.indkey()), str(zeros), str(zeros), str(zeros),
					types.Null, types.Null})
			}
			return append(rows, secondaryPgIndexRows(e)...)
		})
	register("pg_catalog.pg_constraint", cols("oid", types.Int8, "conname", types.Text, "connamespace", types.Int8, "contype", types.Text,
		"condeferrable", types.Bool, "condeferred", types.Bool, "convalidated", types.Bool,
		"conrelid", types.Int8, "contypid", types.Int8, "conindid", types.Int8, "conparentid", types.Int8,
		"confrelid", types.Int8, "confupdtype", types.Text, "confdeltype", types.Text,
		"confmatchtype", types.Text, "conislocal", types.Bool, "coninhcount", types.Int4,
		"connoinherit", types.Bool, "conkey", types.ArrayOf(types.Int2), "confkey", types.ArrayOf(types.Int2), "conbin", types.Text),
		func(e Engine) []types.Row {
			var rows []types.Row
			rels := e.Relations()
			for _, r := range rels {
				rows = append(rows, constraintRows(rels, r)...)
				if len(r.PrimaryKey) == 0 {
					continue
				}
				rows = append(rows, types.Row{intD(r.OID + 2*PKOIDBase), str(r.PKName()), intD(NamespacePublic),
					str("p"), b(false), b(false), b(true), intD(r.OID), intD(0), intD(r.OID + PKOIDBase),
					intD(0), intD(0), str(" "), str(" "), str(" "), b(true), intD(0), b(true),
					str("{" + strings.ReplaceAll(r.indkey(), " ", ",") + "}"), types.Null, types.Null})
			}
			return rows
		})
	register("pg_catalog.pg_description", cols("objoid", types.Int8, "classoid", types.Int8, "objsubid", types.Int4, "description", types.Text),
		DescriptionRows)
	// pg_attrdef holds the columns' defaults as their SQL text, which
	// pg_get_expr answers as it is.
	register("pg_catalog.pg_attrdef", cols("oid", types.Int8, "adrelid", types.Int8, "adnum", types.Int2, "adbin", types.Text),
		func(e Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.Relations() {
				for i, c := range r.Columns {
					if c.AttrDef() != "" {
						rows = append(rows, types.Row{intD(AttrdefOIDBase + r.OID<<10 + int64(i)), intD(r.OID),
							intD(int64(i + 1)), str(c.AttrDef())})
					}
				}
			}
			return rows
		})
	register("pg_catalog.pg_am", cols("oid", types.Int8, "amname", types.Text, "amhandler", types.Int8, "amtype", types.Text),
		func(Engine) []types.Row {
			return []types.Row{{intD(2), str("heap"), intD(3), str("t")}, {intD(403), str("btree"), intD(330), str("i")}}
		})
	register("pg_catalog.pg_namespace", cols("oid", types.Int8, "nspname", types.Text, "nspowner", types.Int8, "nspacl", types.Text),
		func(Engine) []types.Row {
			return []types.Row{
				{intD(NamespacePgCatalog), str("pg_catalog"), intD(10), types.Null},
				// public as initdb makes it: owned by pg_database_owner,
				// usable and creatable by all.
				{intD(NamespacePublic), str("public"), intD(DatabaseOwnerOID), str("{pg_database_owner=UC/pg_database_owner,=U/pg_database_owner}")},
				{intD(NamespaceInfoSchema), str("information_schema"), intD(10), types.Null},
			}
		})
}
