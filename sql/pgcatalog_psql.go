package sql

import (
	"context"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"streamdb/catalog"
	"streamdb/pgcatalog"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// prepareCatalogQuery answers one of psql's describe queries (recognised by
// the front layer, see front/psql.go) from the catalog. Every output column
// is text, as psql reads them; booleans are "t" / "f".
func (s *session) prepareCatalogQuery(q *front.CatalogQuery) (*prepared, error) {
	name, err := compilePattern(q.NamePattern)
	if err != nil {
		return nil, err
	}
	schema, err := compilePattern(q.SchemaPattern)
	if err != nil {
		return nil, err
	}
	cols := make([]types.Column, len(q.Items))
	for i, it := range q.Items {
		cols[i] = types.Column{Name: it, Type: catalogItemType(it)}
		if t, ok := djangoItemType(q.Shape, it); ok {
			cols[i].Type = t
		}
		if t, ok := sequelizeItemType(q.Shape, it); ok {
			cols[i].Type = t
		}
		if it == "" {
			cols[i].Name = "?column?"
		}
	}
	a := &catalogAnswer{s: s, q: q, name: name, schema: schema}
	return taggedRows("SELECT", cols, func(context.Context) ([]types.Row, error) {
		var rows []types.Row
		for _, fields := range a.rows() {
			row := make(types.Row, len(q.Items))
			for i, it := range q.Items {
				row[i] = types.Null
				if v, ok := fields[it]; ok {
					row[i] = v
				}
			}
			rows = append(rows, row)
		}
		return rows, nil
	}), nil
}

// compilePattern compiles a psql pattern regex (POSIX syntax, which Go's
// RE2 reads for the patterns psql builds); "" gives nil, matching anything.
func compilePattern(p string) (*regexp.Regexp, error) {
	if p == "" {
		return nil, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidRegularExpression, "invalid regular expression: %v", err)
	}
	return re, nil
}

func matches(re *regexp.Regexp, s string) bool { return re == nil || re.MatchString(s) }

// catalogAnswer computes the rows of one catalog query, each as values by
// item name.
type catalogAnswer struct {
	s            *session
	q            *front.CatalogQuery
	name, schema *regexp.Regexp
}

type fieldRow map[string]types.Datum

func str(s string) types.Datum { return types.NewString(s) }

func boolText(b bool) types.Datum {
	if b {
		return str("t")
	}
	return str("f")
}

func (a *catalogAnswer) owner() string {
	if a.s.user != "" {
		return a.s.user
	}
	return "streamdb"
}

func (a *catalogAnswer) rows() []fieldRow {
	e := a.s.e
	switch a.q.Shape {
	case front.CatalogRelations:
		return a.relations()
	case front.CatalogRoles:
		return a.roles()
	case front.CatalogLookup:
		var out []fieldRow
		if !matches(a.schema, "public") {
			return nil
		}
		for _, r := range e.pgRelations() {
			if matches(a.name, r.d.Name) {
				out = append(out, fieldRow{"oid": str(strconv.Itoa(int(r.oid))), "nspname": str("public"), "relname": str(r.d.Name)})
			}
		}
		return out
	case front.CatalogRelation:
		r, ok := e.pgRelationByOID(a.q.OID)
		if !ok {
			return nil
		}
		return []fieldRow{{
			"relchecks": str(strconv.Itoa(r.checkCount())), "relkind": str(r.relkind), "relhasindex": boolText(len(r.d.PrimaryKey) > 0 || len(r.d.Indexes) > 0 || r.hasUnique()),
			"relhasrules": boolText(false), "relhastriggers": boolText(e.hasForeignKeys(r.d)), "relrowsecurity": boolText(false),
			"relforcerowsecurity": boolText(false), "relhasoids": boolText(false), "relispartition": boolText(false),
			"": str(""), "array_to_string": str(""), "reltablespace": str("0"), "reloftype": str(""),
			"relpersistence": str("p"), "relreplident": str("d"), "amname": str("heap"),
		}}
	case front.CatalogAttributes:
		r, ok := e.pgRelationByOID(a.q.OID)
		if !ok {
			return nil
		}
		var out []fieldRow
		for _, c := range r.cols {
			out = append(out, fieldRow{
				"attname": str(c.name), "format_type": str(c.formatType()), "attnotnull": types.NewBool(c.notNull),
				"table_oid":   intD(int64(r.oid)),
				"attidentity": str(c.identity), "attgenerated": str(c.attGenerated()), "attstorage": str(attstorageCode(c.typ)),
				"pg_get_expr":    attrDefDatum(c),
				"attcompression": str(""), "col_description": commentDatum(c.comment),
			})
		}
		return out
	case front.CatalogJDBCPrimaryKeys:
		return a.jdbcKeys()
	case front.CatalogJDBCIndexInfo:
		return a.jdbcIndexInfo()
	case front.CatalogReferencedBy:
		return e.referencedByRows(a.q.OID)
	case front.CatalogDjangoConstraints:
		return a.djangoConstraints()
	case front.CatalogDjangoIndexes:
		return a.djangoIndexes()
	case front.CatalogSequelizeIndexes:
		return a.sequelizeIndexes()
	case front.CatalogJDBCTypeCache:
		return jdbcTypeCache(e)
	case front.CatalogJDBCTypes:
		var out []fieldRow
		for _, t := range pgcatalog.Types {
			out = append(out, fieldRow{"typname": str(t.Name), "oid": intD(t.OID)})
		}
		return out
	case front.CatalogPrimaryKey:
		r, _ := e.pgRelationByOID(a.q.OID)
		var out []fieldRow
		for _, k := range r.pkColumns() {
			out = append(out, fieldRow{"attname": str(k)})
		}
		return out
	case front.CatalogIndexes:
		r, ok := e.pgRelationByOID(a.q.OID)
		if !ok {
			return nil
		}
		var out []fieldRow
		if len(r.d.PrimaryKey) > 0 {
			out = append(out, fieldRow{
				"relname": str(r.pkName()), "indisprimary": boolText(true), "indisunique": boolText(true),
				"indisclustered": boolText(false), "indisvalid": boolText(true), "pg_get_indexdef": str(r.indexDef()),
				"pg_get_constraintdef": str(r.constraintDef()), "contype": str("p"), "condeferrable": boolText(false),
				"condeferred": boolText(false), "indisreplident": boolText(false), "reltablespace": str("0"),
			})
		}
		out = append(out, r.secondaryIndexFields()...)
		return append(out, r.uniqueIndexRows()...)
	case front.CatalogViewDef:
		r, ok := e.pgRelationByOID(a.q.OID)
		if !ok || r.d.Query == "" {
			return nil
		}
		def := strings.TrimRight(strings.TrimSpace(r.d.Query), ";") + ";"
		// The column goes by its alias when it has one (pg_dump's
		// AS viewdef).
		return []fieldRow{{a.q.Items[0]: str(" " + def)}}
	case front.CatalogDatabases:
		db := a.s.database
		if db == "" {
			db = a.owner()
		}
		if !matches(a.name, db) {
			return nil
		}
		return []fieldRow{{
			"Name": str(db), "Owner": str(a.owner()), "Encoding": str("UTF8"), "Collate": str("C"),
			"Ctype": str("C"), "Locale Provider": str("libc"),
		}}
	case front.CatalogSchemas:
		if !matches(a.schema, "public") {
			return nil
		}
		return []fieldRow{{"Name": str("public"), "Owner": str("pg_database_owner"), "Description": str("standard public schema")}}
	}
	return nil
}

// relations answers \d, \dt, \dv, \dm (and + forms).
func (a *catalogAnswer) relations() []fieldRow {
	kinds := map[string]bool{}
	for _, k := range a.q.RelKinds {
		kinds[k] = true
	}
	if !matches(a.schema, "public") {
		return nil
	}
	var out []fieldRow
	for _, r := range a.s.e.pgRelations() {
		if len(kinds) > 0 && !kinds[r.relkind] || !matches(a.name, r.d.Name) {
			continue
		}
		row := fieldRow{
			"Schema": str("public"), "Name": str(r.d.Name), "Type": str(relkindName(r.relkind)),
			"Owner": str(a.relationOwner(r.d)), "Persistence": str("permanent"), "Access method": str("heap"),
		}
		if d := r.description(); d != "" {
			row["Description"] = str(d)
		}
		out = append(out, row)
	}
	if kinds["i"] {
		out = append(out, a.indexRelations()...)
		sort.SliceStable(out, func(i, j int) bool { return out[i]["Name"].S < out[j]["Name"].S })
	}
	if len(kinds) == 0 || kinds["S"] {
		for _, d := range a.s.e.objects(catalog.KindSequence) {
			if matches(a.name, d.Name) {
				out = append(out, fieldRow{"Schema": str("public"), "Name": str(d.Name), "Type": str("sequence"),
					"Owner": str(a.relationOwner(d)), "Persistence": str("permanent"), "Access method": types.Null})
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i]["Name"].S < out[j]["Name"].S })
	}
	return out
}

// catalogItemType is the type of a recognised catalog query's column:
// text, as psql reads every value, except for the items that drivers
// (SQLAlchemy's reflection) read as booleans or numbers. psql sees the
// same text either way.
func catalogItemType(item string) types.Type {
	switch item {
	case "attnotnull", "non_unique", "is_array":
		return types.Bool
	case "table_oid", "oid":
		return types.Int8
	case "key_seq", "type", "ordinal_position", "pages":
		return types.Int4
	case "cardinality":
		return types.Float4
	}
	return types.Text
}

// pkColumns are the primary key's columns in key order (none for a
// relation without one).
func (r pgRelation) pkColumns() []string {
	if r.d == nil {
		return nil
	}
	return r.d.PrimaryKey
}
