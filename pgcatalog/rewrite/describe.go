package rewrite

import (
	"regexp"

	"streamdb/front"
	"streamdb/pgcatalog"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Describe answers one of psql's or a driver's describe queries
// (recognised by the front layer, see front/psql.go) with pgcatalog's
// answer (pgcatalog.Describe), asked by user in database: its columns,
// and its rows computed from an engine when it runs. Every output column
// is text, as psql reads them, except the items drivers read as other
// types. An invalid pattern is an error (2201B).
func Describe(q *front.CatalogQuery, user, database string) (cols []types.Column, rows func(pgcatalog.Engine) []types.Row, err error) {
	name, err := compilePattern(q.NamePattern)
	if err != nil {
		return nil, nil, err
	}
	schema, err := compilePattern(q.SchemaPattern)
	if err != nil {
		return nil, nil, err
	}
	cols = make([]types.Column, len(q.Items))
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
	a := &catalogAnswer{q: q, name: name, schema: schema, user: user, database: database}
	return cols, func(e pgcatalog.Engine) []types.Row {
		var rows []types.Row
		for _, fields := range a.rows(e) {
			row := make(types.Row, len(q.Items))
			for i, it := range q.Items {
				row[i] = types.Null
				if v, ok := fields[it]; ok {
					row[i] = v
				}
			}
			rows = append(rows, row)
		}
		return rows
	}, nil
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

// catalogAnswer computes the rows of one catalog query, each as values by
// item name.
type catalogAnswer struct {
	q              *front.CatalogQuery
	name, schema   *regexp.Regexp
	user, database string
}

// describe is the query as pgcatalog answers it.
func (a *catalogAnswer) describe() pgcatalog.Describe {
	return pgcatalog.Describe{Name: a.name, Schema: a.schema, OID: int64(a.q.OID), RelKinds: a.q.RelKinds,
		UniqueOnly: a.q.UniqueOnly, User: a.user, Database: a.database}
}

func (a *catalogAnswer) rows(e pgcatalog.Engine) []pgcatalog.Fields {
	d := a.describe()
	switch a.q.Shape {
	case front.CatalogRelations:
		return d.Relations(e)
	case front.CatalogRoles:
		return d.Roles(e)
	case front.CatalogLookup:
		return d.Lookup(e)
	case front.CatalogRelation:
		return d.Relation(e)
	case front.CatalogAttributes:
		return d.Attributes(e)
	case front.CatalogJDBCPrimaryKeys:
		return d.JDBCKeys(e)
	case front.CatalogJDBCIndexInfo:
		return d.JDBCIndexInfo(e)
	case front.CatalogReferencedBy:
		return pgcatalog.ReferencedByRows(e, d.OID)
	case front.CatalogDjangoConstraints:
		return d.DjangoConstraints(e)
	case front.CatalogDjangoIndexes:
		return d.DjangoIndexes(e)
	case front.CatalogSequelizeIndexes:
		return d.SequelizeIndexes(e)
	case front.CatalogJDBCTypeCache:
		return pgcatalog.JDBCTypeCache()
	case front.CatalogJDBCTypes:
		return pgcatalog.JDBCTypes()
	case front.CatalogPrimaryKey:
		return d.PrimaryKey(e)
	case front.CatalogIndexes:
		return d.Indexes(e)
	case front.CatalogViewDef:
		return d.ViewDef(e, a.q.Items[0])
	case front.CatalogDatabases:
		return d.Databases()
	case front.CatalogSchemas:
		return d.Schemas()
	}
	return nil
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

// djangoItemType is the type of a Django query's column (text unless
// listed).
func djangoItemType(shape front.CatalogShape, item string) (types.Type, bool) {
	if shape != front.CatalogDjangoConstraints && shape != front.CatalogDjangoIndexes {
		return types.Unknown, false
	}
	switch item {
	case "columns", "orders":
		return types.ArrayOf(types.Text), true
	case "unique", "primary":
		return types.Bool, true
	}
	return types.Text, true
}

// sequelizeItemType is the type of a column of Sequelize's index query.
func sequelizeItemType(shape front.CatalogShape, item string) (types.Type, bool) {
	if shape != front.CatalogSequelizeIndexes {
		return types.Unknown, false
	}
	switch item {
	case "primary", "unique":
		return types.Bool, true
	case "column_indexes":
		return types.ArrayOf(types.Int2), true
	}
	return types.Text, true
}
