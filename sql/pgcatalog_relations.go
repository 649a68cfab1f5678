package sql

import (
	"sort"
	"strings"
	"sync"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/pgcatalog"
	"streamdb/types"
)

// pg_class, pg_attribute, pg_index, pg_constraint, pg_description,
// pg_attrdef and pg_am: the relation catalogs, computed from the catalog.
//
// Besides the user relations (public) and their primary key indexes, pg_class
// lists the system tables themselves, in pg_catalog or information_schema,
// with relkind 'v': they are computed on every read, as views are, so tools
// that browse system objects see them and 'pg_class'::regclass names a row
// of pg_class. Their OIDs are PostgreSQL's for the catalogs that have fixed
// ones (pg_class is 1259), else fixed numbers below firstUserOID.

// pgRel is one row of pg_class with the facts the other catalogs need.
type pgRel struct {
	oid      int64
	name     string
	ns       int64
	kind     string // relkind
	cols     []pgColumn
	user     *pgRelation         // the user relation, nil for system tables and indexes
	index    *pgRelation         // for a primary key index: its table
	seq      *catalog.Descriptor // for a sequence: it
	hasIndex bool
}

// pgSystemRelOIDs are PostgreSQL's OIDs of its system catalogs.
var pgSystemRelOIDs = map[string]int64{
	"pg_type": 1247, "pg_attribute": 1249, "pg_proc": 1255, "pg_class": 1259, "pg_database": 1262,
	"pg_am": 2601, "pg_attrdef": 2604, "pg_constraint": 2606, "pg_description": 2609, "pg_index": 2610,
	"pg_namespace": 2615, "pg_extension": 3079,
}

// pgSystemRels lists the system tables as pg_class rows, by qualified name.
var pgSystemRels = sync.OnceValue(func() []pgRel {
	names := make([]string, 0, len(pgSystemTables))
	for n := range pgSystemTables {
		names = append(names, n)
	}
	sort.Strings(names)
	var rels []pgRel
	for i, n := range names {
		schema, name, _ := strings.Cut(n, ".")
		ns := int64(oidPgCatalog)
		if schema == "information_schema" {
			ns = oidInfoSchema
		}
		oid, ok := pgSystemRelOIDs[name]
		switch {
		case ns == oidInfoSchema:
			oid = expr.InfoSchemaRelOIDs + int64(i)
		case !ok:
			oid = int64(14000 + i)
		}
		r := pgRel{oid: oid, name: name, ns: ns, kind: "v"}
		for _, c := range pgSystemTables[n].cols {
			r.cols = append(r.cols, pgColumn{name: c.Name, typ: c.Type})
		}
		rels = append(rels, r)
	}
	return rels
})

// pgClassRows lists every relation pg_class shows: user relations, their
// primary key indexes, then the system tables.
func (e *Engine) pgClassRows() []pgRel {
	var out []pgRel
	for _, r := range e.pgRelations() {
		r := r
		hasPK := len(r.d.PrimaryKey) > 0
		out = append(out, pgRel{oid: int64(r.oid), name: r.d.Name, ns: oidPublic, kind: r.relkind,
			cols: r.cols, user: &r, hasIndex: hasPK || len(r.catalogIndexes()) > 0})
		out = append(out, r.secondaryIndexClassRows()...)
		if hasPK {
			var keyCols []pgColumn
			for _, k := range r.d.PrimaryKey {
				for _, c := range r.cols {
					if c.name == k {
						c.notNull = false // index columns are never NOT NULL
						keyCols = append(keyCols, c)
					}
				}
			}
			out = append(out, pgRel{oid: int64(r.oid) + pkOIDBase, name: r.pkName(), ns: oidPublic, kind: "i",
				cols: keyCols, index: &r})
		}
	}
	for _, d := range e.objects(catalog.KindSequence) {
		out = append(out, pgRel{oid: int64(firstUserOID + d.ID), name: d.Name, ns: oidPublic, kind: "S", cols: sequenceColumns, seq: d})
	}
	return append(out, pgSystemRels()...)
}

// attrdefOIDBase offsets the OIDs of pg_attrdef's rows (relation OID
// times 1024 plus the column's index) past those of relations and keys.
const attrdefOIDBase = 3 * pkOIDBase

// sequenceColumns are the columns PostgreSQL lists for a sequence.
var sequenceColumns = []pgColumn{{name: "last_value", typ: types.Int8, notNull: true},
	{name: "log_cnt", typ: types.Int8, notNull: true}, {name: "is_called", typ: types.Bool, notNull: true}}

// pgRelByName finds a pg_class row by name, optionally schema-qualified;
// an unqualified name is looked up in public, then pg_catalog (the search
// path).
func (e *Engine) pgRelByName(name string) (pgRel, bool) {
	schema, rel, qualified := strings.Cut(name, ".")
	if !qualified {
		schema, rel = "", name
	}
	var found *pgRel
	for _, r := range e.pgClassRows() {
		if r.name != rel {
			continue
		}
		switch {
		case schema == "" && (r.ns == oidPublic || r.ns == oidPgCatalog && found == nil),
			schema == "public" && r.ns == oidPublic,
			schema == "pg_catalog" && r.ns == oidPgCatalog,
			schema == "information_schema" && r.ns == oidInfoSchema:
			r := r
			found = &r
		}
	}
	if found == nil {
		return pgRel{}, false
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
func (e *Engine) descriptionRows() []types.Row {
	rows := []types.Row{{intD(oidPublic), intD(pgSystemRelOIDs["pg_namespace"]), intD(0), str("standard public schema")}}
	for _, r := range e.pgRelations() {
		if d := r.description(); d != "" {
			rows = append(rows, types.Row{intD(int64(r.oid)), intD(pgSystemRelOIDs["pg_class"]), intD(0), str(d)})
		}
		for i, c := range r.cols {
			if c.comment != "" {
				rows = append(rows, types.Row{intD(int64(r.oid)), intD(pgSystemRelOIDs["pg_class"]), intD(int64(i + 1)), str(c.comment)})
			}
		}
	}
	return rows
}

func init() {
	b := types.NewBool
	pgSystemTables["pg_catalog.pg_class"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "relname", types.Text, "relnamespace", types.Int8, "reltype", types.Int8,
			"reloftype", types.Int8, "relowner", types.Int8, "relam", types.Int8, "relfilenode", types.Int8,
			"reltablespace", types.Int8, "relpages", types.Int4, "reltuples", types.Float4,
			"relallvisible", types.Int4, "reltoastrelid", types.Int8, "relhasindex", types.Bool,
			"relisshared", types.Bool, "relpersistence", types.Text, "relkind", types.Text,
			"relnatts", types.Int2, "relchecks", types.Int2, "relhasrules", types.Bool,
			"relhastriggers", types.Bool, "relhassubclass", types.Bool, "relrowsecurity", types.Bool,
			"relforcerowsecurity", types.Bool, "relispopulated", types.Bool, "relreplident", types.Text,
			"relispartition", types.Bool, "relrewrite", types.Int8, "relfrozenxid", types.Int8,
			"relminmxid", types.Int8, "relacl", types.Text, "reloptions", types.Text, "relpartbound", types.Text),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			fkTables := map[string]bool{}
			for _, t := range e.objects(catalog.KindTable) {
				for _, c := range t.Constraints {
					if c.Type == "f" {
						fkTables[t.Name], fkTables[c.RefTable] = true, true
					}
				}
			}
			oids := e.roleOIDs()
			for _, r := range e.pgClassRows() {
				owner := int64(10)
				switch {
				case r.user != nil:
					owner = e.ownerOID(oids, r.user.d)
				case r.index != nil:
					owner = e.ownerOID(oids, r.index.d)
				case r.seq != nil:
					owner = e.ownerOID(oids, r.seq)
				}
				am := int64(0)
				switch r.kind {
				case "r", "m":
					am = 2 // heap
				case "i":
					am = 403 // btree
				}
				checks := 0
				if r.user != nil {
					for _, c := range r.user.d.Constraints {
						if c.Type == "c" {
							checks++
						}
					}
				}
				// A foreign key is kept by triggers on both its tables in
				// PostgreSQL (pg_dump looks for foreign keys only where
				// relhastriggers is set); a view has its _RETURN rule.
				triggers := r.user != nil && fkTables[r.user.d.Name]
				rules := r.kind == "v" || r.kind == "m"
				rows = append(rows, types.Row{intD(r.oid), str(r.name), intD(r.ns), intD(0), intD(0), intD(owner),
					intD(am), intD(0), intD(0), intD(0), types.NewFloat(-1), intD(0), intD(0), b(r.hasIndex),
					b(false), str("p"), str(r.kind), intD(int64(len(r.cols))), intD(int64(checks)), b(rules),
					b(triggers), b(false), b(false), b(false), b(r.user == nil || r.user.d.Kind != catalog.KindUnpopulatedView), str("d"), b(false), intD(0), intD(0),
					intD(0), types.Null, types.Null, types.Null})
			}
			return rows
		},
	}
	pgSystemTables["pg_catalog.pg_attribute"] = pgSystemTableDef{
		cols: cols("attrelid", types.Int8, "attname", types.Text, "atttypid", types.Int8, "attstattarget", types.Int4,
			"attlen", types.Int2, "attnum", types.Int2, "attndims", types.Int4, "attcacheoff", types.Int4,
			"atttypmod", types.Int4, "attbyval", types.Bool, "attalign", types.Text, "attstorage", types.Text,
			"attcompression", types.Text, "attnotnull", types.Bool, "atthasdef", types.Bool,
			"atthasmissing", types.Bool, "attidentity", types.Text, "attgenerated", types.Text,
			"attisdropped", types.Bool, "attislocal", types.Bool, "attinhcount", types.Int4,
			"attcollation", types.Int8, "attacl", types.Text, "attoptions", types.Text,
			"attfdwoptions", types.Text, "attmissingval", types.Text),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.pgClassRows() {
				for i, c := range r.cols {
					t, _ := pgcatalog.TypeByOID(int64(c.typ.OID()))
					collation := int64(0)
					if c.typ.IsString() {
						collation = 100
					}
					rows = append(rows, types.Row{intD(r.oid), str(c.name), intD(int64(c.typ.OID())), intD(-1),
						intD(t.Len), intD(int64(i + 1)), intD(0), intD(-1), intD(c.atttypmod()), b(t.ByVal),
						str("i"), str(attstorageCode(c.typ)), str(""), b(c.notNull), b(c.attrDef() != ""), b(false),
						str(c.identity), str(c.attGenerated()), b(false), b(true), intD(0), intD(collation), types.Null, types.Null,
						types.Null, types.Null})
				}
				if r.kind == "r" || r.kind == "m" {
					for _, sc := range pgSystemColumns {
						rows = append(rows, types.Row{intD(r.oid), str(sc.name), intD(sc.typ), intD(0),
							intD(sc.len), intD(sc.num), intD(0), intD(-1), intD(-1), b(sc.len != 6),
							str(sc.align), str("p"), str(""), b(true), b(false), b(false),
							str(""), str(""), b(false), b(true), intD(0), intD(0), types.Null, types.Null,
							types.Null, types.Null})
					}
				}
			}
			return rows
		},
	}
	pgSystemTables["pg_catalog.pg_index"] = pgSystemTableDef{
		cols: cols("indexrelid", types.Int8, "indrelid", types.Int8, "indnatts", types.Int2, "indnkeyatts", types.Int2,
			"indisunique", types.Bool, "indnullsnotdistinct", types.Bool, "indisprimary", types.Bool,
			"indisexclusion", types.Bool, "indimmediate", types.Bool, "indisclustered", types.Bool,
			"indisvalid", types.Bool, "indcheckxmin", types.Bool, "indisready", types.Bool, "indislive", types.Bool,
			"indisreplident", types.Bool, "indkey", types.Text, "indcollation", types.Text, "indclass", types.Text,
			"indoption", types.Text, "indexprs", types.Text, "indpred", types.Text),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.pgRelations() {
				n := len(r.d.PrimaryKey)
				if n == 0 {
					continue
				}
				zeros := strings.TrimSpace(strings.Repeat("0 ", n))
				rows = append(rows, types.Row{intD(int64(r.oid) + pkOIDBase), intD(int64(r.oid)), intD(int64(n)),
					intD(int64(n)), b(true), b(false), b(true), b(false), b(true), b(false), b(true), b(false),
					b(true), b(true), b(false), str(r.indkey()), str(zeros), str(zeros), str(zeros),
					types.Null, types.Null})
			}
			return append(rows, e.secondaryPgIndexRows()...)
		},
	}
	pgSystemTables["pg_catalog.pg_constraint"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "conname", types.Text, "connamespace", types.Int8, "contype", types.Text,
			"condeferrable", types.Bool, "condeferred", types.Bool, "convalidated", types.Bool,
			"conrelid", types.Int8, "contypid", types.Int8, "conindid", types.Int8, "conparentid", types.Int8,
			"confrelid", types.Int8, "confupdtype", types.Text, "confdeltype", types.Text,
			"confmatchtype", types.Text, "conislocal", types.Bool, "coninhcount", types.Int4,
			"connoinherit", types.Bool, "conkey", types.ArrayOf(types.Int2), "confkey", types.ArrayOf(types.Int2), "conbin", types.Text),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.pgRelations() {
				rows = append(rows, e.constraintRows(r)...)
				if len(r.d.PrimaryKey) == 0 {
					continue
				}
				rows = append(rows, types.Row{intD(int64(r.oid) + 2*pkOIDBase), str(r.pkName()), intD(oidPublic),
					str("p"), b(false), b(false), b(true), intD(int64(r.oid)), intD(0), intD(int64(r.oid) + pkOIDBase),
					intD(0), intD(0), str(" "), str(" "), str(" "), b(true), intD(0), b(true),
					str("{" + strings.ReplaceAll(r.indkey(), " ", ",") + "}"), types.Null, types.Null})
			}
			return rows
		},
	}
	pgSystemTables["pg_catalog.pg_description"] = pgSystemTableDef{
		cols: cols("objoid", types.Int8, "classoid", types.Int8, "objsubid", types.Int4, "description", types.Text),
		rows: func(e *Engine) []types.Row { return e.descriptionRows() },
	}
	// pg_attrdef holds the columns' defaults as their SQL text, which
	// pg_get_expr answers as it is.
	pgSystemTables["pg_catalog.pg_attrdef"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "adrelid", types.Int8, "adnum", types.Int2, "adbin", types.Text),
		rows: func(e *Engine) []types.Row {
			var rows []types.Row
			for _, r := range e.pgRelations() {
				for i, c := range r.cols {
					if c.attrDef() != "" {
						rows = append(rows, types.Row{intD(attrdefOIDBase + int64(r.oid)<<10 + int64(i)), intD(int64(r.oid)),
							intD(int64(i + 1)), str(c.attrDef())})
					}
				}
			}
			return rows
		},
	}
	pgSystemTables["pg_catalog.pg_am"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "amname", types.Text, "amhandler", types.Int8, "amtype", types.Text),
		rows: func(*Engine) []types.Row {
			return []types.Row{{intD(2), str("heap"), intD(3), str("t")}, {intD(403), str("btree"), intD(330), str("i")}}
		},
	}
	pgSystemTables["pg_catalog.pg_namespace"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "nspname", types.Text, "nspowner", types.Int8, "nspacl", types.Text),
		rows: func(*Engine) []types.Row {
			return []types.Row{
				{intD(oidPgCatalog), str("pg_catalog"), intD(10), types.Null},
				// public as initdb makes it: owned by pg_database_owner,
				// usable and creatable by all.
				{intD(oidPublic), str("public"), intD(pgDatabaseOwnerOID), str("{pg_database_owner=UC/pg_database_owner,=U/pg_database_owner}")},
				{intD(oidInfoSchema), str("information_schema"), intD(10), types.Null},
			}
		},
	}
}

// relationOID is the pg_class OID of the relation d names, the value of
// its system column tableoid: a user relation's or a system table's, 0
// for others (streamdb's own tables outside pg_catalog).
func relationOID(d *catalog.Descriptor) int64 {
	switch d.Kind {
	case catalog.KindStream, catalog.KindTable, catalog.KindView, catalog.KindUnpopulatedView, catalog.KindPlainView, catalog.KindSequence:
		return int64(firstUserOID + d.ID)
	case catalog.KindSystem:
		name := d.Name
		if !strings.Contains(name, ".") {
			name = "pg_catalog." + name
		}
		schema, rel, _ := strings.Cut(name, ".")
		ns := int64(oidPgCatalog)
		if schema == "information_schema" {
			ns = oidInfoSchema
		}
		for _, r := range pgSystemRels() {
			if r.name == rel && r.ns == ns {
				return r.oid
			}
		}
	}
	return 0
}
