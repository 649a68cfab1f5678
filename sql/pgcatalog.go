package sql

import (
	"fmt"
	"sort"
	"strings"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/types"
)

// The PostgreSQL view of streamdb's catalog, shared by the pg_catalog and
// information_schema system tables and by the answers to psql's describe
// queries (pgcatalog_psql.go).
//
// Every user object lives in schema public. Relation kinds (pg_class.relkind):
// tables are 'r', views 'v', materialized views 'm', and streams are 'r' too: psql's
// \dt lists them and \d shows their columns as a table's, and their
// description (obj_description, \dt+) says they are streams and on which
// subject. A relation's OID is firstUserOID plus its catalog ID, so it is
// stable across restarts.

const (
	firstUserOID = 16384 // PostgreSQL's FirstNormalObjectId
	// oidPgCatalog, oidPublic and oidInfoSchema are the namespace OIDs.
	oidPgCatalog  = 11
	oidPublic     = 2200
	oidInfoSchema = 13000
	// pkOIDBase offsets a relation's OID to its primary key index's OID.
	pkOIDBase = 1 << 30
)

// pgRelation is one user relation as PostgreSQL's catalogs describe it.
type pgRelation struct {
	d       *catalog.Descriptor
	oid     uint32
	relkind string
	cols    []pgColumn
}

// pgColumn is one column with its PostgreSQL type facts.
type pgColumn struct {
	name    string
	typ     types.Type
	mod     types.Modifier
	notNull bool   // NOT NULL or part of the primary key
	comment string // COMMENT ON COLUMN
	// def is the column's DEFAULT as SQL text ("" for none); identity is
	// pg_attribute.attidentity ("a", "d" or "").
	def, identity string
	// generated is a generated column's expression as SQL text ("" for
	// other columns): pg_attrdef holds it, pg_attribute.attgenerated is
	// "s".
	generated string
}

// pgRelations lists the user relations (streams, tables, materialized
// views) by name.
func (e *Engine) pgRelations() []pgRelation {
	var out []pgRelation
	for _, kind := range []catalog.ObjectKind{catalog.KindStream, catalog.KindTable, catalog.KindView, catalog.KindUnpopulatedView, catalog.KindPlainView} {
		for _, d := range e.objects(kind) {
			out = append(out, newPGRelation(d))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].d.Name < out[j].d.Name })
	return out
}

// pgRelationByOID finds a user relation by OID.
func (e *Engine) pgRelationByOID(oid uint32) (pgRelation, bool) {
	for _, r := range e.pgRelations() {
		if r.oid == oid {
			return r, true
		}
	}
	return pgRelation{}, false
}

func newPGRelation(d *catalog.Descriptor) pgRelation {
	r := pgRelation{d: d, oid: firstUserOID + d.ID, relkind: "r"}
	switch d.Kind {
	case catalog.KindView, catalog.KindUnpopulatedView:
		r.relkind = "m"
	case catalog.KindPlainView:
		r.relkind = "v"
	}
	key := map[string]bool{}
	for _, k := range d.PrimaryKey {
		key[k] = true
	}
	for _, c := range d.Columns {
		t, mod, err := types.ParseWithModifier(c.Type)
		if err != nil {
			t = types.Text
		}
		r.cols = append(r.cols, pgColumn{name: c.Name, typ: t, mod: mod, notNull: key[c.Name] || c.NotNull, comment: c.Comment,
			def: c.Default, identity: c.Identity, generated: c.Generated})
	}
	return r
}

// description is obj_description of the relation: its COMMENT ON, or
// else what kind of streamdb object it is, for the relkinds that do not
// say it.
func (r pgRelation) description() string {
	if r.d.Comment != "" {
		return r.d.Comment
	}
	if r.d.Kind == catalog.KindStream {
		return fmt.Sprintf("stream on subject %s", r.d.Subject)
	}
	return ""
}

// pkName is the name of the primary key's index, as PostgreSQL names it.
func (r pgRelation) pkName() string { return r.d.Name + "_pkey" }

// relkindName is psql's word for a relkind.
func relkindName(k string) string {
	switch k {
	case "r":
		return "table"
	case "v":
		return "view"
	case "m":
		return "materialized view"
	case "f":
		return "foreign table"
	}
	return ""
}

// formatType is pg_catalog.format_type of a column: "bigint",
// "character varying(20)", "numeric(10,2)", "time(3) without time zone".
func (c pgColumn) formatType() string {
	if c.typ.IsTimeOfDay() {
		return types.TypeName(c.typ, c.mod)
	}
	return c.typ.String() + c.mod.Suffix()
}

// typname is pg_type.typname of a type.
func typname(t types.Type) string {
	if t.IsArray() {
		return "_" + typname(t.Elem())
	}
	switch t {
	case types.Bytea:
		return "bytea"
	case types.Bool:
		return "bool"
	case types.Int2:
		return "int2"
	case types.Int4:
		return "int4"
	case types.Int8:
		return "int8"
	case types.Float4:
		return "float4"
	case types.Float8:
		return "float8"
	case types.Numeric:
		return "numeric"
	case types.Varchar:
		return "varchar"
	case types.Date:
		return "date"
	case types.Timestamp:
		return "timestamp"
	case types.Timestamptz:
		return "timestamptz"
	case types.Interval:
		return "interval"
	case types.Time:
		return "time"
	case types.TimeTZ:
		return "timetz"
	case types.UUID:
		return "uuid"
	case types.JSON, types.JSONB:
		return t.String()
	}
	return "text"
}

// attstorage is pg_attribute.attstorage as PostgreSQL chooses it.
func attstorage(t types.Type) string {
	switch t {
	case types.Text, types.Varchar:
		return "extended"
	case types.Numeric:
		return "main"
	}
	return "plain"
}

// attstorageCode is attstorage's one-letter code in pg_attribute.
func attstorageCode(t types.Type) string {
	switch attstorage(t) {
	case "extended":
		return "x"
	case "main":
		return "m"
	}
	return "p"
}

// atttypmod is pg_attribute.atttypmod: -1 for none, else PostgreSQL's
// encoding (length + 4; (precision << 16 | scale) + 4; time(p)'s p).
func (c pgColumn) atttypmod() int64 {
	switch {
	case c.mod.HasTimePrecision:
		return int64(c.mod.TimePrecision)
	case c.mod.Length > 0:
		return int64(c.mod.Length) + 4
	case c.mod.Precision > 0:
		return int64(c.mod.Precision)<<16 | int64(c.mod.Scale) + 4
	}
	return -1
}

// indexDef is pg_get_indexdef of the primary key.
func (r pgRelation) indexDef() string {
	return fmt.Sprintf("CREATE UNIQUE INDEX %s ON public.%s USING btree (%s)",
		quoteIdent(r.pkName()), quoteIdent(r.d.Name), quoteIdents(r.d.PrimaryKey))
}

// indkey is pg_index.indkey of the primary key: its column numbers.
func (r pgRelation) indkey() string {
	var nums []string
	for _, k := range r.d.PrimaryKey {
		for i, c := range r.cols {
			if c.name == k {
				nums = append(nums, fmt.Sprint(i+1))
			}
		}
	}
	return strings.Join(nums, " ")
}

// constraintDef is pg_get_constraintdef of the primary key.
func (r pgRelation) constraintDef() string {
	return fmt.Sprintf("PRIMARY KEY (%s)", quoteIdents(r.d.PrimaryKey))
}

func quoteIdents(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return strings.Join(q, ", ")
}

// quoteIdent quotes a name the way PostgreSQL's quote_ident does.
func quoteIdent(name string) string { return expr.QuoteIdent(name) }

// quoteLiteral quotes s as a standard SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// attrDef is the column's pg_attrdef expression: its generation
// expression or its DEFAULT ("" for neither).
func (c pgColumn) attrDef() string {
	if c.generated != "" {
		return c.generated
	}
	return c.def
}

// attGenerated is pg_attribute.attgenerated: "s" for a stored generated
// column.
func (c pgColumn) attGenerated() string {
	if c.generated != "" {
		return "s"
	}
	return ""
}
