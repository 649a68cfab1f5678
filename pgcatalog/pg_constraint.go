package pgcatalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"streamdb/catalog"
	"streamdb/types"
)

// pg_constraint rows, pg_get_constraintdef and the information_schema
// views for a table's UNIQUE, CHECK and FOREIGN KEY constraints
// (Constraint); the primary key's are in pg_class.go and
// information_schema.go.

// constraintOIDBase numbers constraints: base + table oid << 10 + the
// constraint's place in the table's list.
const constraintOIDBase = 4 * PKOIDBase

func (r Relation) constraintOID(i int) int64 {
	return constraintOIDBase + r.OID<<10 + int64(i)
}

// attnums returns the column numbers of names in table cols, as an int2[]
// literal.
func attnums(cols []Column, names []string) string {
	nums := make([]string, 0, len(names))
	for _, n := range names {
		for i, c := range cols {
			if c.Name == n {
				nums = append(nums, fmt.Sprint(i+1))
			}
		}
	}
	return "{" + strings.Join(nums, ",") + "}"
}

// constraintRows returns the pg_constraint rows of table r's constraints;
// rels are the user relations, which foreign keys reference.
func constraintRows(rels []Relation, r Relation) []types.Row {
	var rows []types.Row
	for i, c := range r.Constraints {
		confrelid, confkey, conindid := int64(0), types.Null, int64(0)
		upd, del, match := " ", " ", " "
		if c.Type == "f" {
			if p, ok := relationNamed(rels, c.RefTable); ok {
				confrelid = p.OID
				if sameColumns(p.PrimaryKey, c.RefColumns) {
					// The primary key's index, as pg_class lists it.
					conindid = confrelid + PKOIDBase
				}
				confkey = str(attnums(p.Columns, c.RefColumns))
			}
			upd, del, match = c.OnUpdate, c.OnDelete, "s"
		}
		if c.Type == "u" {
			conindid = r.constraintIndexOID(c.Name)
		}
		rows = append(rows, types.Row{intD(r.constraintOID(i)), str(c.Name), intD(NamespacePublic),
			str(c.Type), types.NewBool(c.Deferrable), types.NewBool(c.Deferred), types.NewBool(true), intD(r.OID), intD(0), intD(conindid),
			intD(0), intD(confrelid), str(upd), str(del), str(match), types.NewBool(true), intD(0), types.NewBool(false),
			str(attnums(r.Columns, c.Columns)), confkey, types.Null})
	}
	return rows
}

// ConstraintDefText is pg_get_constraintdef's text for c.
func ConstraintDefText(c Constraint) string {
	switch c.Type {
	case "u":
		return fmt.Sprintf("UNIQUE (%s)", QuoteIdents(c.Columns)) + deferrableText(c)
	case "c":
		return fmt.Sprintf("CHECK ((%s))", strings.TrimSpace(c.Check))
	}
	s := fmt.Sprintf("FOREIGN KEY (%s) REFERENCES %s(%s)", QuoteIdents(c.Columns), QuoteIdent(c.RefTable), QuoteIdents(c.RefColumns))
	if a := actionText(c.OnUpdate); a != "" {
		s += " ON UPDATE " + a
	}
	if a := actionText(c.OnDelete); a != "" {
		s += " ON DELETE " + a
	}
	return s + deferrableText(c)
}

func deferrableText(c Constraint) string {
	switch {
	case c.Deferred:
		return " DEFERRABLE INITIALLY DEFERRED"
	case c.Deferrable:
		return " DEFERRABLE"
	}
	return ""
}

// actionText is a referential action's SQL; "" for NO ACTION.
func actionText(code string) string {
	switch code {
	case "r":
		return "RESTRICT"
	case "c":
		return "CASCADE"
	case "n":
		return "SET NULL"
	case "d":
		return "SET DEFAULT"
	}
	return ""
}

// constraintDefs are pg_get_constraintdef's answers for the constraints
// of r. pretty (its second argument) leaves a CHECK's outer parentheses
// out, as psql's \d shows it.
func (r Relation) constraintDefs(pretty bool) []Answer {
	var out []Answer
	for i, c := range r.Constraints {
		def := ConstraintDefText(c)
		if pretty && c.Type == "c" {
			def = fmt.Sprintf("CHECK (%s)", strings.TrimSpace(c.Check))
		}
		out = append(out, Answer{r.constraintOID(i), def})
	}
	return out
}

// constraintTypeName is information_schema's constraint_type.
func constraintTypeName(t string) string {
	switch t {
	case "u":
		return "UNIQUE"
	case "c":
		return "CHECK"
	}
	return "FOREIGN KEY"
}

// ruleName is information_schema's update_rule / delete_rule.
func ruleName(code string) string {
	if a := actionText(code); a != "" {
		return a
	}
	return "NO ACTION"
}

// uniqueConstraintName names the primary key or UNIQUE constraint of
// table p that a foreign key referencing cols uses.
func uniqueConstraintName(p Relation, cols []string) string {
	if slices.Equal(cols, p.PrimaryKey) || sameColumns(p.PrimaryKey, cols) {
		return catalog.PrimaryKeyName(p.Name)
	}
	for _, c := range p.Constraints {
		if c.Type == "u" && sameColumns(c.Columns, cols) {
			return c.Name
		}
	}
	return ""
}

// infoSchemaConstraintRows are table r's rows of
// information_schema.table_constraints for its constraints.
func infoSchemaConstraintRows(r Relation) []types.Row {
	var out []types.Row
	for _, c := range r.Constraints {
		nd := types.Null
		if c.Type == "u" {
			nd = str("YES")
		}
		out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(c.Name), str(infoSchemaCatalog),
			str("public"), str(r.Name), str(constraintTypeName(c.Type)), yesNo(c.Deferrable), yesNo(c.Deferred), str("YES"), nd})
	}
	return out
}

// infoSchemaKeyColumnRows are table r's rows of
// information_schema.key_column_usage for its UNIQUE and FOREIGN KEY
// constraints.
func infoSchemaKeyColumnRows(rels []Relation, r Relation) []types.Row {
	var out []types.Row
	for _, c := range r.Constraints {
		if c.Type == "c" {
			continue
		}
		var refOrder []string
		if c.Type == "f" {
			if p, ok := relationNamed(rels, c.RefTable); ok {
				refOrder = p.PrimaryKey
				if name := uniqueConstraintName(p, c.RefColumns); name != catalog.PrimaryKeyName(p.Name) {
					if u, ok := p.constraint(name); ok {
						refOrder = u.Columns
					}
				}
			}
		}
		for i, col := range c.Columns {
			pos := types.Null
			if c.Type == "f" {
				if j := slices.Index(refOrder, c.RefColumns[i]); j >= 0 {
					pos = intD(int64(j + 1))
				}
			}
			out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(c.Name),
				str(infoSchemaCatalog), str("public"), str(r.Name), str(col), intD(int64(i + 1)), pos})
		}
	}
	return out
}

func init() {
	register("information_schema.check_constraints", cols("constraint_catalog", types.Text, "constraint_schema", types.Text, "constraint_name", types.Text,
		"check_clause", types.Text),
		func(e Engine) []types.Row {
			var out []types.Row
			for _, r := range e.Relations() {
				if r.Kind == "m" {
					continue
				}
				for _, c := range r.Constraints {
					if c.Type == "c" {
						out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(c.Name),
							str("((" + strings.TrimSpace(c.Check) + "))")})
					}
				}
				for i, c := range r.Columns {
					if c.NotNull {
						out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(r.notNullName(i + 1)),
							str(QuoteIdent(c.Name) + " IS NOT NULL")})
					}
				}
			}
			return out
		})
	register("information_schema.referential_constraints", cols("constraint_catalog", types.Text, "constraint_schema", types.Text, "constraint_name", types.Text,
		"unique_constraint_catalog", types.Text, "unique_constraint_schema", types.Text,
		"unique_constraint_name", types.Text, "match_option", types.Text, "update_rule", types.Text,
		"delete_rule", types.Text),
		func(e Engine) []types.Row {
			var out []types.Row
			rels := e.Relations()
			for _, r := range rels {
				for _, c := range r.Constraints {
					if c.Type != "f" {
						continue
					}
					uname := types.Null
					if p, ok := relationNamed(rels, c.RefTable); ok {
						uname = str(uniqueConstraintName(p, c.RefColumns))
					}
					out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(c.Name),
						str(infoSchemaCatalog), str("public"), uname, str("NONE"),
						str(ruleName(c.OnUpdate)), str(ruleName(c.OnDelete))})
				}
			}
			return out
		})
}

// CheckCount is pg_class.relchecks: the table's CHECK constraints.
func (r Relation) CheckCount() int {
	n := 0
	for _, c := range r.Constraints {
		if c.Type == "c" {
			n++
		}
	}
	return n
}

// HasUnique reports whether the table has a UNIQUE constraint.
func (r Relation) HasUnique() bool { return r.hasConstraint("u") }

// fkLink is a foreign key of a table that references a table, both
// having the columns it names.
type fkLink struct {
	child, parent Relation
	con           Constraint
}

// fkLinks lists the foreign keys of rels, by the referencing table's
// OID, then name.
func fkLinks(rels []Relation) []fkLink {
	var out []fkLink
	for _, d := range rels {
		if !d.isTable() {
			continue
		}
		for _, c := range d.Constraints {
			p, ok := relationNamed(rels, c.RefTable)
			if !ok || c.Type != "f" || !p.isTable() {
				continue
			}
			ok = len(c.Columns) == len(c.RefColumns)
			for i := range c.Columns {
				ok = ok && d.columnIndex(c.Columns[i]) >= 0 && p.columnIndex(c.RefColumns[i]) >= 0
			}
			if ok {
				out = append(out, fkLink{child: d, parent: p, con: c})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].child.OID != out[j].child.OID {
			return out[i].child.OID < out[j].child.OID
		}
		return out[i].con.Name < out[j].con.Name
	})
	return out
}

// HasForeignKeys is pg_class.relhastriggers, which psql's \d reads to
// list foreign keys: PostgreSQL keeps them as triggers on both tables.
func HasForeignKeys(e Engine, r Relation) bool {
	if r.hasConstraint("f") {
		return true
	}
	for _, l := range fkLinks(e.Relations()) {
		if l.parent.OID == r.OID {
			return true
		}
	}
	return false
}

// UniqueIndexRows are the rows of psql's \d index query for the table's
// UNIQUE constraints, each kept as PostgreSQL keeps it: by an index of
// the constraint's name.
func (r Relation) UniqueIndexRows() []Fields {
	var out []Fields
	for _, c := range r.Constraints {
		if c.Type != "u" {
			continue
		}
		def := fmt.Sprintf("CREATE UNIQUE INDEX %s ON public.%s USING btree (%s)", QuoteIdent(c.Name), QuoteIdent(r.Name), QuoteIdents(c.Columns))
		out = append(out, Fields{
			"relname": str(c.Name), "indisprimary": boolText(false), "indisunique": boolText(true),
			"indisclustered": boolText(false), "indisvalid": boolText(true), "pg_get_indexdef": str(def),
			"pg_get_constraintdef": str(ConstraintDefText(c)), "contype": str("u"), "condeferrable": boolText(c.Deferrable),
			"condeferred": boolText(c.Deferred), "indisreplident": boolText(false), "reltablespace": str("0"),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["relname"].S < out[j]["relname"].S })
	return out
}

// ReferencedByRows answers psql's "Referenced by" query for the table
// with oid: the foreign keys of other tables (and its own) that reference
// it, by name.
func ReferencedByRows(e Engine, oid int64) []Fields {
	var out []Fields
	for _, l := range fkLinks(e.Relations()) {
		if l.parent.OID != oid {
			continue
		}
		out = append(out, Fields{"conname": str(l.con.Name), "ontable": str(QuoteIdent(l.child.Name)),
			"condef": str(ConstraintDefText(l.con))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["conname"].S < out[j]["conname"].S })
	return out
}
