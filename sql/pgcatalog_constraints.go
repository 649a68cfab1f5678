package sql

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
// (catalog.Constraint); the primary key's are in pgcatalog_relations.go
// and infoschema_constraints.go.

// constraintOIDBase numbers constraints: base + table oid << 10 + the
// constraint's place in the table's list.
const constraintOIDBase = 4 * pkOIDBase

func (r pgRelation) constraintOID(i int) int64 {
	return constraintOIDBase + int64(r.oid)<<10 + int64(i)
}

// attnums returns the column numbers of names in table cols, as an int2[]
// literal.
func attnums(cols []pgColumn, names []string) string {
	nums := make([]string, 0, len(names))
	for _, n := range names {
		for i, c := range cols {
			if c.name == n {
				nums = append(nums, fmt.Sprint(i+1))
			}
		}
	}
	return "{" + strings.Join(nums, ",") + "}"
}

// constraintRows returns the pg_constraint rows of table r's constraints.
func (e *Engine) constraintRows(r pgRelation) []types.Row {
	var rows []types.Row
	for i, c := range r.d.Constraints {
		confrelid, confkey, conindid := int64(0), types.Null, int64(0)
		upd, del, match := " ", " ", " "
		if c.Type == "f" {
			if p, ok := e.lookup(c.RefTable); ok {
				confrelid = int64(firstUserOID + p.ID)
				if referencesKey(&catalog.Descriptor{PrimaryKey: p.PrimaryKey}, c.RefColumns) {
					// The primary key's index, as pg_class lists it.
					conindid = confrelid + pkOIDBase
				}
				pr := pgRelation{d: p, oid: firstUserOID + p.ID}
				pr.cols = pgColumnsOf(p)
				confkey = str(attnums(pr.cols, c.RefColumns))
			}
			upd, del, match = c.OnUpdate, c.OnDelete, "s"
		}
		if c.Type == "u" {
			conindid = r.constraintIndexOID(c.Name)
		}
		rows = append(rows, types.Row{intD(r.constraintOID(i)), str(c.Name), intD(oidPublic),
			str(c.Type), types.NewBool(c.Deferrable), types.NewBool(c.Deferred), types.NewBool(true), intD(int64(r.oid)), intD(0), intD(conindid),
			intD(0), intD(confrelid), str(upd), str(del), str(match), types.NewBool(true), intD(0), types.NewBool(false),
			str(attnums(r.cols, c.Columns)), confkey, types.Null})
	}
	return rows
}

// pgColumnsOf lists d's columns with the facts pg_constraint needs.
func pgColumnsOf(d *catalog.Descriptor) []pgColumn {
	out := make([]pgColumn, len(d.Columns))
	for i, c := range d.Columns {
		out[i] = pgColumn{name: c.Name}
	}
	return out
}

// constraintDefText is pg_get_constraintdef's text for c.
func constraintDefText(c catalog.Constraint) string {
	switch c.Type {
	case "u":
		return fmt.Sprintf("UNIQUE (%s)", quoteIdents(c.Columns)) + deferrableText(c)
	case "c":
		return fmt.Sprintf("CHECK ((%s))", strings.TrimSpace(c.Check))
	}
	s := fmt.Sprintf("FOREIGN KEY (%s) REFERENCES %s(%s)", quoteIdents(c.Columns), quoteIdent(c.RefTable), quoteIdents(c.RefColumns))
	if a := actionText(c.OnUpdate); a != "" {
		s += " ON UPDATE " + a
	}
	if a := actionText(c.OnDelete); a != "" {
		s += " ON DELETE " + a
	}
	return s + deferrableText(c)
}

func deferrableText(c catalog.Constraint) string {
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

// constraintDefPairs are pg_get_constraintdef's answers for the
// constraints of r, by oid.
// pretty (its second argument) leaves a CHECK's outer parentheses out,
// as psql's \d shows it.
func (r pgRelation) constraintDefPairs(pretty bool) [][2]any {
	var out [][2]any
	for i, c := range r.d.Constraints {
		def := constraintDefText(c)
		if pretty && c.Type == "c" {
			def = fmt.Sprintf("CHECK (%s)", strings.TrimSpace(c.Check))
		}
		out = append(out, [2]any{r.constraintOID(i), def})
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
func uniqueConstraintName(p *catalog.Descriptor, cols []string) string {
	if slices.Equal(cols, p.PrimaryKey) || referencesKey(&catalog.Descriptor{PrimaryKey: p.PrimaryKey}, cols) {
		return p.Name + "_pkey"
	}
	for _, c := range p.Constraints {
		if c.Type == "u" && referencesKey(&catalog.Descriptor{PrimaryKey: c.Columns}, cols) {
			return c.Name
		}
	}
	return ""
}

// infoSchemaConstraintRows are table r's rows of
// information_schema.table_constraints for its constraints.
func infoSchemaConstraintRows(r pgRelation) []types.Row {
	var out []types.Row
	for _, c := range r.d.Constraints {
		nd := types.Null
		if c.Type == "u" {
			nd = str("YES")
		}
		out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(c.Name), str(infoSchemaCatalog),
			str("public"), str(r.d.Name), str(constraintTypeName(c.Type)), yesNo(c.Deferrable), yesNo(c.Deferred), str("YES"), nd})
	}
	return out
}

// infoSchemaKeyColumnRows are table r's rows of
// information_schema.key_column_usage for its UNIQUE and FOREIGN KEY
// constraints.
func (e *Engine) infoSchemaKeyColumnRows(r pgRelation) []types.Row {
	var out []types.Row
	for _, c := range r.d.Constraints {
		if c.Type == "c" {
			continue
		}
		var refOrder []string
		if c.Type == "f" {
			if p, ok := e.lookup(c.RefTable); ok {
				refOrder = p.PrimaryKey
				if name := uniqueConstraintName(p, c.RefColumns); name != p.Name+"_pkey" {
					if u := p.Constraint(name); u != nil {
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
				str(infoSchemaCatalog), str("public"), str(r.d.Name), str(col), intD(int64(i + 1)), pos})
		}
	}
	return out
}

func init() {
	pgSystemTables["information_schema.check_constraints"] = pgSystemTableDef{
		cols: cols("constraint_catalog", types.Text, "constraint_schema", types.Text, "constraint_name", types.Text,
			"check_clause", types.Text),
		rows: func(e *Engine) []types.Row {
			var out []types.Row
			for _, r := range e.pgRelations() {
				if r.d.Kind == catalog.KindView {
					continue
				}
				for _, c := range r.d.Constraints {
					if c.Type == "c" {
						out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(c.Name),
							str("((" + strings.TrimSpace(c.Check) + "))")})
					}
				}
				for i, c := range r.cols {
					if c.notNull {
						out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(r.notNullName(i + 1)),
							str(quoteIdent(c.name) + " IS NOT NULL")})
					}
				}
			}
			return out
		},
	}
	pgSystemTables["information_schema.referential_constraints"] = pgSystemTableDef{
		cols: cols("constraint_catalog", types.Text, "constraint_schema", types.Text, "constraint_name", types.Text,
			"unique_constraint_catalog", types.Text, "unique_constraint_schema", types.Text,
			"unique_constraint_name", types.Text, "match_option", types.Text, "update_rule", types.Text,
			"delete_rule", types.Text),
		rows: func(e *Engine) []types.Row {
			var out []types.Row
			for _, r := range e.pgRelations() {
				for _, c := range r.d.Constraints {
					if c.Type != "f" {
						continue
					}
					uname := types.Null
					if p, ok := e.lookup(c.RefTable); ok {
						uname = str(uniqueConstraintName(p, c.RefColumns))
					}
					out = append(out, types.Row{str(infoSchemaCatalog), str("public"), str(c.Name),
						str(infoSchemaCatalog), str("public"), uname, str("NONE"),
						str(ruleName(c.OnUpdate)), str(ruleName(c.OnDelete))})
				}
			}
			return out
		},
	}
}

// checkCount is pg_class.relchecks: the table's CHECK constraints.
func (r pgRelation) checkCount() int {
	n := 0
	for _, c := range r.d.Constraints {
		if c.Type == "c" {
			n++
		}
	}
	return n
}

func (r pgRelation) hasUnique() bool { return hasConstraint(r.d, "u") }

// hasForeignKeys is pg_class.relhastriggers, which psql's \d reads to
// list foreign keys: PostgreSQL keeps them as triggers on both tables.
func (e *Engine) hasForeignKeys(d *catalog.Descriptor) bool {
	if hasConstraint(d, "f") {
		return true
	}
	for _, l := range e.fkLinks() {
		if l.parent.ID == d.ID {
			return true
		}
	}
	return false
}

// uniqueIndexRows are the rows of psql's \d index query for the table's
// UNIQUE constraints, each kept as PostgreSQL keeps it: by an index of
// the constraint's name.
func (r pgRelation) uniqueIndexRows() []fieldRow {
	var out []fieldRow
	for _, c := range r.d.Constraints {
		if c.Type != "u" {
			continue
		}
		def := fmt.Sprintf("CREATE UNIQUE INDEX %s ON public.%s USING btree (%s)", quoteIdent(c.Name), quoteIdent(r.d.Name), quoteIdents(c.Columns))
		out = append(out, fieldRow{
			"relname": str(c.Name), "indisprimary": boolText(false), "indisunique": boolText(true),
			"indisclustered": boolText(false), "indisvalid": boolText(true), "pg_get_indexdef": str(def),
			"pg_get_constraintdef": str(constraintDefText(c)), "contype": str("u"), "condeferrable": boolText(c.Deferrable),
			"condeferred": boolText(c.Deferred), "indisreplident": boolText(false), "reltablespace": str("0"),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["relname"].S < out[j]["relname"].S })
	return out
}

// referencedByRows answers psql's "Referenced by" query for the table
// with oid: the foreign keys of other tables (and its own) that reference
// it, by name.
func (e *Engine) referencedByRows(oid uint32) []fieldRow {
	var out []fieldRow
	for _, l := range e.fkLinks() {
		if firstUserOID+l.parent.ID != oid {
			continue
		}
		out = append(out, fieldRow{"conname": str(l.con.Name), "ontable": str(quoteIdent(l.child.Name)),
			"condef": str(constraintDefText(l.con))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["conname"].S < out[j]["conname"].S })
	return out
}
