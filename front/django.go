package front

import "strings"

// Django's introspection (inspectdb, and migrations that read a table's
// constraints) reads pg_constraint through ARRAY(SELECT ... FROM
// unnest(conkey) WITH ORDINALITY ...) and pg_index through
// unnest(indkey, indoption) WITH ORDINALITY, which streamdb's query engine
// does not run. The two shapes Django 3.2 and 4.x send from
// DatabaseIntrospection.get_constraints are recognised here and answered
// from the catalog. Their Items are named by what each column holds (the
// output has PostgreSQL's column count and order; Django reads rows by
// position).

// The Django catalog query shapes.
const (
	// CatalogDjangoConstraints is a table's constraints: conname,
	// columns (text[], in key order), contype, fk_target, reloptions.
	CatalogDjangoConstraints CatalogShape = "django constraints"
	// CatalogDjangoIndexes is a table's indexes: indexname, columns
	// (text[]), indisunique, indisprimary (booleans), orders (text[]),
	// amname, exprdef, attoptions.
	CatalogDjangoIndexes CatalogShape = "django indexes"
)

// matchDjangoQuery returns the CatalogQuery of a Django introspection
// query, or nil.
func matchDjangoQuery(q *CatalogQuery, toks []token, head, body string) *CatalogQuery {
	switch {
	case strings.HasPrefix(head, "c . conname , array ( select attname from unnest ( c . conkey ) with ordinality cols ( colid , arridx )") &&
		strings.Contains(body, "from pg_constraint as c join pg_class as cl on c . conrelid = cl . oid") && len(q.Items) == 5:
		q.Shape = CatalogDjangoConstraints
		q.Items = []string{"conname", "columns", "contype", "fk_target", "reloptions"}
	case strings.HasPrefix(head, "indexname , array_agg ( attname order by arridx ) , indisunique , indisprimary") &&
		strings.Contains(body, "unnest ( i . indkey , i . indoption ) with ordinality koi ( key , option , arridx )") && len(q.Items) == 8:
		q.Shape = CatalogDjangoIndexes
		q.Items = []string{"indexname", "columns", "unique", "primary", "orders", "amname", "exprdef", "attoptions"}
	default:
		return nil
	}
	q.NamePattern = exactPattern(toks, "relname")
	if q.NamePattern == "" {
		return nil
	}
	return q
}
