package front

import (
	"regexp"
	"strings"
)

// pgjdbc's DatabaseMetaData queries that read pg_index.indkey through
// information_schema._pg_expandarray and composite field access
// (getPrimaryKeys, getIndexInfo), and the pg_type listing of getTypeInfo,
// with its correlated subquery on pg_class. As with psql's describe
// queries, the shapes pgjdbc 42.x sends are recognised here and answered
// from the catalog.

// The JDBC catalog query shapes.
const (
	// CatalogJDBCPrimaryKeys is getPrimaryKeys: table_cat, table_schem,
	// table_name, column_name, key_seq, pk_name.
	CatalogJDBCPrimaryKeys CatalogShape = "jdbc primary keys"
	// CatalogJDBCIndexInfo is getIndexInfo: one row per index column.
	CatalogJDBCIndexInfo CatalogShape = "jdbc index info"
	// CatalogJDBCTypes is getTypeInfo's list of types: typname, oid.
	CatalogJDBCTypes CatalogShape = "jdbc types"
	// CatalogJDBCTypeCache is the type cache's list of every type, in
	// search path order (which puts pg_catalog's last) and then by
	// descending OID: is_array, typtype, typname, oid.
	CatalogJDBCTypeCache CatalogShape = "jdbc type cache"
)

// matchJDBCQuery returns the CatalogQuery of a pgjdbc query, q filled with
// its items, or nil. head and body are the canonical select list start and
// the text from the top-level FROM on.
func matchJDBCQuery(q *CatalogQuery, toks []token, head, body string) *CatalogQuery {
	switch {
	case strings.HasPrefix(head, "result . table_cat , result . table_schem , result . table_name , result . column_name , result . key_seq , result . pk_name") &&
		strings.Contains(body, "_pg_expandarray ( i . indkey )"):
		q.Shape = CatalogJDBCPrimaryKeys
	case strings.HasPrefix(head, "tmp . table_cat , tmp . table_schem , tmp . table_name , tmp . non_unique") &&
		strings.Contains(body, "_pg_expandarray ( i . indkey )"):
		q.Shape = CatalogJDBCIndexInfo
		q.UniqueOnly = strings.Contains(body, "and i . indisunique")
	case head == "t . typname , t . oid" && strings.Contains(body, "( t . typrelid = 0 or ( select c . relkind = 'c'"):
		q.Shape = CatalogJDBCTypes
		return q
	case strings.HasPrefix(head, "typinput = 'pg_catalog.array_in' :: regproc as is_array , typtype , typname , pg_type . oid") &&
		!strings.Contains(body, "where"):
		q.Shape = CatalogJDBCTypeCache
		return q
	default:
		return nil
	}
	q.NamePattern = exactPattern(toks, "relname")
	q.SchemaPattern = exactPattern(toks, "nspname")
	return q
}

// exactPattern finds "x.col = 'value'" (pgjdbc writes E'value') and
// returns a pattern matching exactly value, or "" (anything).
func exactPattern(toks []token, col string) string {
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].isWord(col) && toks[i+1].isOp("=") && toks[i+2].kind == tkString {
			return "^" + regexp.QuoteMeta(toks[i+2].val) + "$"
		}
	}
	return ""
}
