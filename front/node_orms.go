package front

import "strings"

// Sequelize's QueryInterface.showIndex (sync() and migrations read a
// table's indexes through it) aggregates pg_attribute.attname, of type
// name, and parses the name[] text itself ("{a,b}"): a text[] answer,
// which node-postgres turns into an array, breaks it. The query is
// recognised here and answered from the catalog with the names as that
// text.

// CatalogSequelizeIndexes is a table's indexes: name, primary, unique
// (booleans), indkey (attnums, space-separated), column_indexes
// (smallint[], every attnum), column_names (the names as array text, in
// column_indexes' order), definition.
const CatalogSequelizeIndexes CatalogShape = "sequelize indexes"

// matchNodeORMQuery returns the CatalogQuery of a Node.js ORM's catalog
// query, or nil.
func matchNodeORMQuery(q *CatalogQuery, toks []token, head, body string) *CatalogQuery {
	if !strings.HasPrefix(head, "i . relname as name , ix . indisprimary as primary , ix . indisunique as unique , ix . indkey as indkey ,") ||
		!strings.HasPrefix(body, "from pg_class t , pg_class i , pg_index ix , pg_attribute a where") || len(q.Items) != 7 {
		return nil
	}
	q.Shape = CatalogSequelizeIndexes
	q.Items = []string{"name", "primary", "unique", "indkey", "column_indexes", "column_names", "definition"}
	q.NamePattern = exactPattern(toks, "relname")
	if q.NamePattern == "" {
		return nil
	}
	return q
}
