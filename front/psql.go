package front

import (
	"strconv"
	"strings"
)

// psql's describe commands (\d, \dt, \dv, \dm, \d name, \d+ name, \l, \dn)
// send catalog queries full of PostgreSQL-only machinery: correlated
// subqueries, ARRAY(...), = ANY, regclass casts, the ~ operator with
// COLLATE, pg_get_* functions. streamdb does not try to run them. This file
// recognises the shapes psql 15 sends (by their select list and the catalog
// tables they read) and returns a CatalogQuery; the engine answers it from
// its own catalog. Plain queries on the catalog tables streamdb does serve
// (pg_catalog.pg_class, information_schema.columns, ...) are not recognised
// here and go through the query engine as usual.

// CatalogShape names one kind of psql catalog query.
type CatalogShape string

// The catalog query shapes.
const (
	// CatalogRelations lists relations (\d, \dt, \dv, \dm and their +
	// forms); Items are the output columns by alias: "Schema", "Name",
	// "Type", "Owner", "Persistence", "Access method", "Size",
	// "Description".
	CatalogRelations CatalogShape = "relations"
	// CatalogLookup finds the relations a \d pattern names: oid, nspname,
	// relname.
	CatalogLookup CatalogShape = "lookup"
	// CatalogRelation is the pg_class row of one relation (OID) for \d name.
	CatalogRelation CatalogShape = "relation"
	// CatalogAttributes are the columns of one relation.
	CatalogAttributes CatalogShape = "attributes"
	// CatalogIndexes are the indexes (the primary key) of one relation.
	CatalogIndexes CatalogShape = "indexes"
	// CatalogViewDef is pg_get_viewdef of one view.
	CatalogViewDef CatalogShape = "viewdef"
	// CatalogDatabases lists databases (\l).
	CatalogDatabases CatalogShape = "databases"
	// CatalogSchemas lists schemas (\dn).
	CatalogSchemas CatalogShape = "schemas"
	// CatalogRoles lists roles (\du).
	CatalogRoles CatalogShape = "roles"
	// CatalogPrimaryKey lists the primary key columns of one relation in
	// key order (SQLAlchemy's get_pk_constraint, which unnests
	// pg_index.indkey): attname.
	CatalogPrimaryKey CatalogShape = "primary key"
	// CatalogReferencedBy lists the foreign keys referencing one table
	// (\d name's "Referenced by"): conname, ontable, condef.
	CatalogReferencedBy CatalogShape = "referenced by"
	// CatalogNothing asks about something streamdb does not have (row
	// security policies, extended statistics, publications, inheritance,
	// rules, triggers): no rows.
	CatalogNothing CatalogShape = "nothing"
)

// CatalogQuery is a psql catalog query recognised by shape.
type CatalogQuery struct {
	Shape CatalogShape
	// Items names the select-list items of the query in order, one output
	// column each: the alias when there is one, else the column or
	// function the item is about ("attname", "format_type", "relkind",
	// "pg_get_expr", ...). The engine fills each column by its item name
	// and gives NULL for items it does not know.
	Items []string
	// OID is the relation the query is about (WHERE c.oid = '16384'), or 0.
	OID uint32
	// RelKinds is the relkind IN (...) list of a relation listing.
	RelKinds []string
	// NamePattern and SchemaPattern are the regular expressions psql made
	// of a \d pattern (matched with ~ against relname / nspname, or
	// datname / nspname for \l and \dn); "" matches everything.
	NamePattern   string
	SchemaPattern string
	// UniqueOnly is set for getIndexInfo's unique = true: unique indexes
	// only.
	UniqueOnly bool
}

// matchCatalogQuery returns the CatalogQuery toks (a statement beginning
// with SELECT) is, or nil when it is not one of psql's catalog queries.
func matchCatalogQuery(toks []token) *CatalogQuery {
	if len(toks) < 4 || !toks[0].isWord("select") {
		return nil
	}
	from := topLevelWord(toks, 1, "from")
	if from < 0 {
		from = len(toks)
	}
	items := splitTopLevel(toks[1:from])
	q := &CatalogQuery{Items: make([]string, len(items))}
	for i, it := range items {
		q.Items[i] = itemName(it)
	}
	head := canonical(toks[1:min(from, 30)])
	body := canonical(toks[from:])
	if jq := matchJDBCQuery(q, toks, head, body); jq != nil {
		return jq
	}
	if dq := matchDjangoQuery(q, toks, head, body); dq != nil {
		return dq
	}
	if pq := matchPgDumpQuery(q, head, body); pq != nil {
		return pq
	}
	if nq := matchNodeORMQuery(q, toks, head, body); nq != nil {
		return nq
	}
	switch {
	case strings.HasPrefix(head, `n . nspname as "Schema" , c . relname as "Name"`) && strings.HasPrefix(body, "from pg_catalog . pg_class c"):
		q.Shape = CatalogRelations
		q.RelKinds = relKinds(toks)
	case head == "c . oid , n . nspname , c . relname" && strings.HasPrefix(body, "from pg_catalog . pg_class c left join pg_catalog . pg_namespace n"):
		q.Shape = CatalogLookup
	case strings.HasPrefix(head, "c . relchecks , c . relkind ,"):
		q.Shape = CatalogRelation
	case strings.HasPrefix(head, "a . attname , pg_catalog . format_type ( a . atttypid , a . atttypmod )") && strings.HasPrefix(body, "from pg_catalog . pg_attribute a"):
		q.Shape = CatalogAttributes
	case strings.HasPrefix(head, "c2 . relname , i . indisprimary ,") && strings.Contains(body, "pg_catalog . pg_index i"):
		q.Shape = CatalogIndexes
	case strings.HasPrefix(head, "pg_catalog . pg_get_viewdef ("):
		q.Shape = CatalogViewDef
		if len(items) == 1 && len(items[0]) > 4 && items[0][4].kind == tkString {
			q.OID = parseOID(items[0][4].val)
		}
		if q.OID == 0 {
			return nil
		}
		return q
	case strings.HasPrefix(head, `d . datname as "Name"`) && strings.HasPrefix(body, "from pg_catalog . pg_database d"):
		q.Shape = CatalogDatabases
	case strings.HasPrefix(head, `n . nspname as "Name"`) && strings.HasPrefix(body, "from pg_catalog . pg_namespace n"):
		q.Shape = CatalogSchemas
	case strings.HasPrefix(head, "r . rolname , r . rolsuper , r . rolinherit") && strings.HasPrefix(body, "from pg_catalog . pg_roles r"):
		q.Shape = CatalogRoles
	case head == "a . attname" && strings.Contains(body, "unnest ( ix . indkey )") && strings.Contains(body, "pg_index ix"):
		q.Shape = CatalogPrimaryKey
	case head == "conname , conrelid :: pg_catalog . regclass as ontable , pg_catalog . pg_get_constraintdef ( oid , true ) as condef" &&
		strings.Contains(body, "pg_catalog . pg_partition_ancestors ("):
		q.Shape = CatalogReferencedBy
		for i := 0; i+3 < len(toks); i++ {
			if toks[i].isWord("pg_partition_ancestors") && toks[i+1].isOp("(") && toks[i+2].kind == tkString {
				q.OID = parseOID(toks[i+2].val)
				break
			}
		}
		if q.OID == 0 {
			return nil
		}
		return q
	case readsNothingTable(body):
		q.Shape = CatalogNothing
		return q
	default:
		return nil
	}
	q.OID = relationOID(toks)
	q.NamePattern, q.SchemaPattern = patterns(toks)
	// Queries that look like psql's but lack what psql always puts in
	// (the relation's OID, a pattern, a relkind list) are someone's own
	// queries on the catalog tables: leave them to the query engine.
	switch q.Shape {
	case CatalogRelation, CatalogAttributes, CatalogIndexes, CatalogPrimaryKey:
		if q.OID == 0 {
			return nil
		}
	case CatalogLookup:
		if q.NamePattern == "" && q.SchemaPattern == "" {
			return nil
		}
	case CatalogRelations:
		if q.RelKinds == nil {
			return nil
		}
	}
	return q
}

// nothingTables are catalogs streamdb has no rows for; a psql query that
// reads one of them returns no rows.
var nothingTables = []string{"pg_policy", "pg_statistic_ext", "pg_publication",
	"pg_inherits", "pg_rewrite", "pg_trigger", "pg_foreign_table", "pg_partitioned_table"}

func readsNothingTable(body string) bool {
	for _, t := range nothingTables {
		if strings.HasPrefix(body, "from pg_catalog . "+t+" ") || strings.Contains(body, ", pg_catalog . "+t+" ") {
			return true
		}
	}
	return false
}

// canonical renders tokens one space apart: words lower case, quoted
// identifiers and strings quoted.
func canonical(toks []token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch t.kind {
		case tkIdent:
			b.WriteString(`"` + t.val + `"`)
		case tkString:
			b.WriteString(quoteString(t.val))
		default:
			b.WriteString(t.val)
		}
	}
	return b.String()
}

// topLevelWord returns the index of the first word w at or after start
// outside parentheses, or -1.
func topLevelWord(toks []token, start int, w string) int {
	depth := 0
	for i := start; i < len(toks); i++ {
		switch {
		case toks[i].isOp("(", "["):
			depth++
		case toks[i].isOp(")", "]"):
			depth--
		case depth == 0 && toks[i].isWord(w):
			return i
		}
	}
	return -1
}

// itemName names a select-list item: its alias, else the first name that
// follows a dot (a column or a pg_catalog function), else its only word.
func itemName(it []token) string {
	if n := len(it); n >= 2 && it[n-2].isWord("as") && it[n-1].isName() {
		return it[n-1].val
	}
	for i := 1; i < len(it); i++ {
		if it[i-1].isOp(".") && it[i].isName() {
			return it[i].val
		}
	}
	if len(it) == 1 && it[0].isName() {
		return it[0].val
	}
	return ""
}

// relationOID finds "c.oid = 'N'", "a.attrelid = 'N'" and the like: the
// first string constant (psql) or number (SQLAlchemy) compared with = to a
// column whose name ends in oid, relid or ev_class.
func relationOID(toks []token) uint32 {
	for i := 2; i < len(toks); i++ {
		if !toks[i].isOp("=") || toks[i-1].kind != tkWord || i+1 >= len(toks) || toks[i+1].kind != tkString && toks[i+1].kind != tkNumber {
			continue
		}
		col := toks[i-1].val
		if strings.HasSuffix(col, "oid") || strings.HasSuffix(col, "relid") || col == "ev_class" {
			return parseOID(toks[i+1].val)
		}
	}
	return 0
}

func parseOID(s string) uint32 {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0
	}
	return uint32(n)
}

// patterns finds "x.relname OPERATOR(pg_catalog.~) '...'" (psql's form of
// a pattern; also plain ~) on a name column and on nspname.
func patterns(toks []token) (name, schema string) {
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].kind != tkWord {
			continue
		}
		col := toks[i].val
		j := i + 1
		switch {
		case toks[j].isOp("~"):
			j++
		case toks[j].isWord("operator") && j+5 < len(toks) && toks[j+1].isOp("(") && toks[j+3].isOp(".") && toks[j+4].isOp("~") && toks[j+5].isOp(")"):
			j += 6
		default:
			continue
		}
		if j >= len(toks) || toks[j].kind != tkString {
			continue
		}
		switch col {
		case "relname", "datname", "rolname":
			name = toks[j].val
		case "nspname":
			schema = toks[j].val
		}
	}
	return name, schema
}

// relKinds reads "c.relkind IN ('r','p',”)".
func relKinds(toks []token) []string {
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].isWord("relkind") && toks[i+1].isWord("in") && toks[i+2].isOp("(") {
			end := matchParen(toks, i+2)
			var kinds []string
			for _, t := range toks[i+3 : max(end, i+3)] {
				if t.kind == tkString && t.val != "" {
					kinds = append(kinds, t.val)
				}
			}
			return kinds
		}
	}
	return nil
}
