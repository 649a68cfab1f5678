package pgcatalog

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"streamdb/types"
)

// The answers to psql's describe queries (\d, \dt, \di, \du, \l, \dn,
// ...) and to the catalog queries of drivers and ORMs (pgjdbc's
// getPrimaryKeys and getIndexInfo, Django's get_constraints, Sequelize's
// showIndex), which the front layer recognises (front/psql.go) and
// sql answers from here. Every value is text, as psql reads them, unless
// the query's column says otherwise (sql types the columns); Booleans
// are "t" / "f".

// A Describe is one recognised describe query: what it asks about and
// the session asking.
type Describe struct {
	// Name and Schema are the patterns of the object's and the
	// schema's names (nil matches any).
	Name, Schema *regexp.Regexp
	// OID is the relation a query about one relation names.
	OID int64
	// RelKinds are the relkinds \d lists ("r", "v", "m", "i", "S"; none:
	// all).
	RelKinds []string
	// UniqueOnly: getIndexInfo's unique argument.
	UniqueOnly bool
	// User and Database are the session's.
	User, Database string
}

// matches reports whether s matches re (nil: anything).
func matches(re *regexp.Regexp, s string) bool { return re == nil || re.MatchString(s) }

// Lookup answers psql's lookup of the relations a name pattern names.
func (a Describe) Lookup(e Engine) []Fields {
	var out []Fields
	if !matches(a.Schema, "public") {
		return nil
	}
	for _, r := range e.Relations() {
		if matches(a.Name, r.Name) {
			out = append(out, Fields{"oid": str(strconv.Itoa(int(r.OID))), "nspname": str("public"), "relname": str(r.Name)})
		}
	}
	return out
}

// Relation answers \d's query of the relation's flags.
func (a Describe) Relation(e Engine) []Fields {
	r, ok := RelationByOID(e, a.OID)
	if !ok {
		return nil
	}
	return []Fields{{
		"relchecks": str(strconv.Itoa(r.CheckCount())), "relkind": str(r.Kind), "relhasindex": boolText(len(r.PrimaryKey) > 0 || len(r.Indexes) > 0 || r.HasUnique()),
		"relhasrules": boolText(false), "relhastriggers": boolText(HasForeignKeys(e, r)), "relrowsecurity": boolText(false),
		"relforcerowsecurity": boolText(false), "relhasoids": boolText(false), "relispartition": boolText(false),
		"": str(""), "array_to_string": str(""), "reltablespace": str("0"), "reloftype": str(""),
		"relpersistence": str("p"), "relreplident": str("d"), "amname": str("heap"),
	}}
}

// Attributes answers \d's query of the relation's columns.
func (a Describe) Attributes(e Engine) []Fields {
	r, ok := RelationByOID(e, a.OID)
	if !ok {
		return nil
	}
	var out []Fields
	for _, c := range r.Columns {
		out = append(out, Fields{
			"attname": str(c.Name), "format_type": str(c.FormatType()), "attnotnull": types.NewBool(c.NotNull),
			"table_oid":   intD(r.OID),
			"attidentity": str(c.Identity), "attgenerated": str(c.AttGenerated()), "attstorage": str(AttstorageCode(c.Type)),
			"pg_get_expr":    AttrDefDatum(c),
			"attcompression": str(""), "col_description": nullText(c.Comment),
		})
	}
	return out
}

// JDBCTypes answers pgjdbc's query of the types' names and OIDs.
func JDBCTypes() []Fields {
	var out []Fields
	for _, t := range Types {
		out = append(out, Fields{"typname": str(t.Name), "oid": intD(t.OID)})
	}
	return out
}

// PrimaryKey answers the query of the relation's primary key columns,
// in key order.
func (a Describe) PrimaryKey(e Engine) []Fields {
	r, _ := RelationByOID(e, a.OID)
	var out []Fields
	for _, k := range r.PrimaryKey {
		out = append(out, Fields{"attname": str(k)})
	}
	return out
}

// Indexes answers \d's query of the relation's indexes: the primary
// key's, the CREATE INDEX ones and the UNIQUE constraints'.
func (a Describe) Indexes(e Engine) []Fields {
	r, ok := RelationByOID(e, a.OID)
	if !ok {
		return nil
	}
	var out []Fields
	if len(r.PrimaryKey) > 0 {
		out = append(out, Fields{
			"relname": str(r.PKName()), "indisprimary": boolText(true), "indisunique": boolText(true),
			"indisclustered": boolText(false), "indisvalid": boolText(true), "pg_get_indexdef": str(r.IndexDef()),
			"pg_get_constraintdef": str(r.ConstraintDef()), "contype": str("p"), "condeferrable": boolText(false),
			"condeferred": boolText(false), "indisreplident": boolText(false), "reltablespace": str("0"),
		})
	}
	out = append(out, secondaryIndexFields(r)...)
	return append(out, r.UniqueIndexRows()...)
}

// ViewDef answers the query of a view's definition, as the column item
// (the query's alias of it: pg_dump's AS viewdef).
func (a Describe) ViewDef(e Engine, item string) []Fields {
	r, ok := RelationByOID(e, a.OID)
	if !ok || r.Query == "" {
		return nil
	}
	return []Fields{{item: str(r.ViewDef())}}
}

// Databases answers \l: the one database, under the name the session
// connected to.
func (a Describe) Databases() []Fields {
	db := a.Database
	if db == "" {
		db = a.owner()
	}
	if !matches(a.Name, db) {
		return nil
	}
	return []Fields{{
		"Name": str(db), "Owner": str(a.owner()), "Encoding": str("UTF8"), "Collate": str("C"),
		"Ctype": str("C"), "Locale Provider": str("libc"),
	}}
}

// Schemas answers \dn.
func (a Describe) Schemas() []Fields {
	if !matches(a.Schema, "public") {
		return nil
	}
	return []Fields{{"Name": str("public"), "Owner": str("pg_database_owner"), "Description": str("standard public schema")}}
}

// owner is the session's user, the owner psql shows for what the
// bootstrap superuser owns.
func (a Describe) owner() string {
	if a.User != "" {
		return a.User
	}
	return "streamdb"
}

// Relations answers \d, \dt, \dv, \dm (and + forms).
func (a Describe) Relations(e Engine) []Fields {
	kinds := map[string]bool{}
	for _, k := range a.RelKinds {
		kinds[k] = true
	}
	if !matches(a.Schema, "public") {
		return nil
	}
	var out []Fields
	for _, r := range e.Relations() {
		if len(kinds) > 0 && !kinds[r.Kind] || !matches(a.Name, r.Name) {
			continue
		}
		row := Fields{
			"Schema": str("public"), "Name": str(r.Name), "Type": str(RelkindName(r.Kind)),
			"Owner": str(a.shownOwner(r.Owner)), "Persistence": str("permanent"), "Access method": str("heap"),
			"Access privileges": aclLines(relationACL(r.Owner, objectGrants{r.Grants, r.GrantOrder, r.ACLSet}, false)),
		}
		if d := r.Description(); d != "" {
			row["Description"] = str(d)
		}
		out = append(out, row)
	}
	if kinds["i"] {
		out = append(out, a.indexRelations(e)...)
		sort.SliceStable(out, func(i, j int) bool { return out[i]["Name"].S < out[j]["Name"].S })
	}
	if len(kinds) == 0 || kinds["S"] {
		for _, d := range e.Sequences() {
			if matches(a.Name, d.Name) {
				out = append(out, Fields{"Schema": str("public"), "Name": str(d.Name), "Type": str("sequence"),
					"Owner": str(a.shownOwner(d.Owner)), "Persistence": str("permanent"), "Access method": types.Null,
					"Access privileges": aclLines(relationACL(d.Owner, objectGrants{d.Grants, d.GrantOrder, d.ACLSet}, true))})
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i]["Name"].S < out[j]["Name"].S })
	}
	return out
}

// Roles answers psql's \du: one row per role matching the pattern, with
// the columns psql turns into "Attributes".
func (a Describe) Roles(e Engine) []Fields {
	var out []Fields
	for _, r := range e.Roles() {
		if !matches(a.Name, r.Name) || strings.HasPrefix(r.Name, "pg_") {
			continue
		}
		out = append(out, Fields{
			"rolname": str(r.Name), "rolsuper": boolText(r.Superuser), "rolinherit": boolText(true),
			"rolcreaterole": boolText(r.Superuser), "rolcreatedb": boolText(r.Superuser), "rolcanlogin": boolText(r.Login),
			"rolconnlimit": str("-1"), "memberof": str("{}"), "rolreplication": boolText(false),
			"rolbypassrls": boolText(r.Superuser),
		})
	}
	return out
}

// shownOwner is the owner \d shows of an object owner owns: the created
// role, or, for objects of the bootstrap superuser and of trusted
// sessions, the connected user (as before roles existed).
func (a Describe) shownOwner(owner string) string {
	if owner != BootstrapUser {
		return owner
	}
	return a.owner()
}

// JDBCKeys answers pgjdbc's getPrimaryKeys and getIndexInfo: a row per
// primary key column of each relation the query names (the primary key is
// the only index), in key order.
func (a Describe) JDBCKeys(e Engine) []Fields {
	if !matches(a.Schema, "public") {
		return nil
	}
	var out []Fields
	for _, r := range e.Relations() {
		if !matches(a.Name, r.Name) {
			continue
		}
		for i, k := range r.PrimaryKey {
			out = append(out, Fields{
				"table_schem": str("public"), "table_name": str(r.Name), "column_name": str(k),
				"key_seq": intD(int64(i + 1)), "pk_name": str(r.PKName()),
				"non_unique": types.NewBool(false), "index_name": str(r.PKName()), "type": intD(3),
				"ordinal_position": intD(int64(i + 1)), "asc_or_desc": str("A"),
				"cardinality": types.NewFloat(0), "pages": intD(1),
			})
		}
	}
	return out
}

// jdbcTypeCache answers pgjdbc's query for every type: pg_type's rows by
// descending OID (all are in pg_catalog, which is not on the explicit
// search path, so they all sort last and equal on it).
func JDBCTypeCache() []Fields {
	var out []Fields
	for _, r := range TypeRows() {
		out = append(out, Fields{"oid": r[0], "typname": r[1], "typtype": r[6]})
	}
	arrays := map[int64]bool{}
	for _, t := range Types {
		arrays[t.OID] = t.Input == "array_in"
	}
	for _, f := range out {
		f["is_array"] = types.NewBool(arrays[f["oid"].I])
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["oid"].I > out[j]["oid"].I })
	return out
}

// secondaryIndexFields are the rows of psql's \d index query for r's
// secondary indexes, by name (psql lists the primary key first).
func secondaryIndexFields(r Relation) []Fields {
	var out []Fields
	for _, x := range r.SecondaryIndexes() {
		out = append(out, Fields{
			"relname": str(x.Name), "indisprimary": boolText(false), "indisunique": boolText(x.Unique),
			"indisclustered": boolText(false), "indisvalid": boolText(true), "pg_get_indexdef": str(x.Def()),
			"pg_get_constraintdef": types.Null, "contype": types.Null, "condeferrable": types.Null,
			"condeferred": types.Null, "indisreplident": boolText(false), "reltablespace": str("0"),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["relname"].S < out[j]["relname"].S })
	return out
}

// indexRelations are \di's rows: every index, the primary keys' too.
func (a Describe) indexRelations(e Engine) []Fields {
	var out []Fields
	for _, r := range e.Relations() {
		row := func(name string) Fields {
			return Fields{"Schema": str("public"), "Name": str(name), "Type": str("index"),
				"Owner": str(a.shownOwner(r.Owner)), "Table": str(r.Name), "Persistence": str("permanent"),
				"Access method": str("btree")}
		}
		if len(r.PrimaryKey) > 0 && matches(a.Name, r.PKName()) {
			out = append(out, row(r.PKName()))
		}
		for _, x := range r.SecondaryIndexes() {
			if matches(a.Name, x.Name) {
				out = append(out, row(x.Name))
			}
		}
	}
	return out
}

// JDBCIndexInfo answers pgjdbc's getIndexInfo: the primary key's rows
// (jdbcKeys) and a row per column of each secondary index, ordered as
// JDBC specifies (NON_UNIQUE, TYPE, INDEX_NAME, ORDINAL_POSITION).
func (a Describe) JDBCIndexInfo(e Engine) []Fields {
	out := a.JDBCKeys(e)
	if !matches(a.Schema, "public") {
		return out
	}
	for _, r := range e.Relations() {
		if !matches(a.Name, r.Name) {
			continue
		}
		for _, x := range r.SecondaryIndexes() {
			if a.UniqueOnly && !x.Unique {
				continue
			}
			for i, c := range x.Columns {
				order := "A"
				if c.Desc {
					order = "D"
				}
				out = append(out, Fields{
					"table_schem": str("public"), "table_name": str(r.Name), "column_name": str(c.Name),
					"non_unique": types.NewBool(!x.Unique), "index_name": str(x.Name), "type": intD(3),
					"ordinal_position": intD(int64(i + 1)), "asc_or_desc": str(order),
					"cardinality": types.NewFloat(0), "pages": intD(1),
				})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i]["non_unique"].Bool() != out[j]["non_unique"].Bool() {
			return !out[i]["non_unique"].Bool()
		}
		return out[i]["index_name"].S < out[j]["index_name"].S
	})
	return out
}

// djangoSecondaryIndexes are the rows of Django's index query for r's
// secondary indexes.
func djangoSecondaryIndexes(r Relation) []Fields {
	var out []Fields
	for _, x := range r.SecondaryIndexes() {
		orders := make([]string, len(x.Columns))
		for i, c := range x.Columns {
			orders[i] = "ASC"
			if c.Desc {
				orders[i] = "DESC"
			}
		}
		out = append(out, Fields{"indexname": str(x.Name), "columns": textArrayDatum(x.ColumnNames()),
			"unique": types.NewBool(x.Unique), "primary": types.NewBool(false), "orders": textArrayDatum(orders),
			"amname": str("btree")})
	}
	return out
}

// DjangoConstraints answers Django's get_constraints query on
// pg_constraint: the primary key of the table the query names, its
// columns in key order, and its UNIQUE, CHECK and FOREIGN KEY
// constraints (a foreign key's target as "table.column").
func (a Describe) DjangoConstraints(e Engine) []Fields {
	var out []Fields
	for _, r := range e.Relations() {
		if !matches(a.Name, r.Name) {
			continue
		}
		if len(r.PrimaryKey) > 0 {
			out = append(out, Fields{"conname": str(r.PKName()), "columns": textArrayDatum(r.PrimaryKey), "contype": str("p")})
		}
		for _, c := range r.Constraints {
			row := Fields{"conname": str(c.Name), "columns": textArrayDatum(c.Columns), "contype": str(c.Type)}
			if c.Type == "f" {
				row["fk_target"] = str(c.RefTable + "." + c.RefColumns[0])
			}
			out = append(out, row)
		}
	}
	return out
}

// DjangoIndexes answers Django's get_constraints query on pg_index: the
// primary key's index, ascending on each column, as btree.
func (a Describe) DjangoIndexes(e Engine) []Fields {
	var out []Fields
	for _, r := range e.Relations() {
		if matches(a.Name, r.Name) {
			out = append(out, djangoSecondaryIndexes(r)...)
		}
		if !matches(a.Name, r.Name) || len(r.PrimaryKey) == 0 {
			continue
		}
		orders := make([]string, len(r.PrimaryKey))
		for i := range orders {
			orders[i] = "ASC"
		}
		out = append(out, Fields{"indexname": str(r.PKName()), "columns": textArrayDatum(r.PrimaryKey),
			"unique": types.NewBool(true), "primary": types.NewBool(true), "orders": textArrayDatum(orders),
			"amname": str("btree")})
	}
	return out
}
func textArrayDatum(elems []string) types.Datum {
	ds := make([]types.Datum, len(elems))
	for i, e := range elems {
		ds[i] = str(e)
	}
	return str(types.FormatArray(ds))
}

// SequelizeIndexes answers Sequelize's showIndex: the primary key's index
// and the secondary indexes of the tables the query names, by name.
func (a Describe) SequelizeIndexes(e Engine) []Fields {
	var out []Fields
	for _, r := range e.Relations() {
		if r.Kind != "r" || !matches(a.Name, r.Name) {
			continue
		}
		nums := make([]types.Datum, len(r.Columns))
		names := make([]string, len(r.Columns))
		attnum := map[string]int{}
		for i, c := range r.Columns {
			nums[i] = str(strconv.Itoa(i + 1))
			names[i] = c.Name
			attnum[c.Name] = i + 1
		}
		row := func(name string, primary, unique bool, cols []string, def string) Fields {
			keys := make([]string, len(cols))
			for i, c := range cols {
				keys[i] = strconv.Itoa(attnum[c])
			}
			return Fields{"name": str(name), "primary": types.NewBool(primary), "unique": types.NewBool(unique),
				"indkey": str(strings.Join(keys, " ")), "column_indexes": str(types.FormatArray(nums)),
				"column_names": textArrayDatum(names), "definition": str(def)}
		}
		if len(r.PrimaryKey) > 0 {
			out = append(out, row(r.PKName(), true, true, r.PrimaryKey, r.IndexDef()))
		}
		for _, x := range r.SecondaryIndexes() {
			out = append(out, row(x.Name, false, x.Unique, x.ColumnNames(), x.Def()))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i]["name"].S < out[j]["name"].S })
	return out
}
