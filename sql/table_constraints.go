package sql

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A table's UNIQUE, CHECK and FOREIGN KEY constraints (catalog.Constraint)
// are enforced as PostgreSQL enforces non-deferrable constraints: at the
// end of each statement, and again at COMMIT against the tables as they
// are then (table_unique.go, table_fk.go), so two transactions that each
// look fine on their own snapshot cannot both commit a duplicate or an
// orphan. A CHECK reads only the row, so it is checked once, when the
// statement writes the row. NULLs never violate a UNIQUE (they are
// distinct, PostgreSQL's default) or a foreign key (MATCH SIMPLE).

// constraintDefs builds the catalog entries of a new table's constraints:
// the constraint names (PostgreSQL's generated names where none is
// given), the columns checked and the referenced tables resolved. The
// caller holds ddlMu.
func (e *Engine) constraintDefs(n *front.CreateSource, d *catalog.Descriptor) ([]catalog.Constraint, error) {
	if len(n.Constraints) == 0 {
		return nil, nil
	}
	if d.Kind != catalog.KindTable && !(n.Kind == front.KindTable && !n.AppendOnly) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "constraints on streams are not supported").
			WithHint("UNIQUE, CHECK and FOREIGN KEY constraints are enforced on tables (CREATE TABLE without APPEND ONLY).")
	}
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	var built []catalog.Constraint
	for i := range n.Constraints {
		c, err := e.constraintDef(d, cols, &n.Constraints[i], d)
		if err != nil {
			return nil, err
		}
		if c.Type == "u" && dedupUnique(d, built, c) {
			continue
		}
		built = append(built, c)
	}
	// Named constraints keep their names; the others are named after
	// them, in order.
	taken := map[string]bool{catalog.PrimaryKeyName(d.Name): len(d.PrimaryKey) > 0}
	for _, c := range built {
		if c.Name == "" {
			continue
		}
		if taken[c.Name] {
			return nil, sqlerr.New(sqlerr.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", c.Name, d.Name)
		}
		if c.Type == "u" && e.relationNameTaken(c.Name) {
			// The UNIQUE's index is a relation of that name.
			return nil, sqlerr.New(sqlerr.DuplicateTable, "relation \"%s\" already exists", c.Name)
		}
		taken[c.Name] = true
	}
	for i := range built {
		if built[i].Name == "" {
			built[i].Name = e.chooseUniqueName(d.Name, built[i], taken)
			taken[built[i].Name] = true
		}
	}
	return built, nil
}

// dedupUnique reports whether UNIQUE constraint c repeats the primary key
// or an earlier UNIQUE of the same columns in the same order, which
// PostgreSQL drops (an unnamed earlier one takes c's name).
func dedupUnique(d *catalog.Descriptor, built []catalog.Constraint, c catalog.Constraint) bool {
	if slices.Equal(c.Columns, d.PrimaryKey) {
		return true
	}
	for i := range built {
		if built[i].Type == "u" && slices.Equal(built[i].Columns, c.Columns) {
			if built[i].Name == "" {
				built[i].Name = c.Name
			}
			return true
		}
	}
	return false
}

// constraintDef checks one constraint of table d (columns cols) and builds
// its catalog entry (without a generated name). self is d as a foreign key
// of d on itself references it.
func (e *Engine) constraintDef(d *catalog.Descriptor, cols []types.Column, def *front.ConstraintDef, self *catalog.Descriptor) (catalog.Constraint, error) {
	c := catalog.Constraint{Name: def.Name, Type: def.Type, Columns: def.Columns, Deferrable: def.Deferrable, Deferred: def.Deferred}
	for _, name := range def.Columns {
		if columnIndex(cols, name) < 0 {
			return c, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" named in key does not exist", name)
		}
	}
	switch def.Type {
	case "c":
		c.Check = def.CheckText
		c.Columns = checkColumns(def.Check, cols)
		if _, err := bindCheck(d, cols, c.Check); err != nil {
			return c, err
		}
	case "f":
		parent := self
		if def.RefTable != self.Name {
			p, ok := e.lookup(def.RefTable)
			if !ok {
				return c, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", def.RefTable)
			}
			if p.Kind != catalog.KindTable {
				return c, sqlerr.New(sqlerr.WrongObjectType, "referenced relation \"%s\" is not a table", def.RefTable)
			}
			parent = p
		}
		pcols, err := parent.Schema()
		if err != nil {
			return c, err
		}
		c.RefTable = parent.Name
		c.RefColumns = def.RefColumns
		if c.RefColumns == nil {
			if len(parent.PrimaryKey) == 0 {
				return c, sqlerr.New(sqlerr.UndefinedObject, "there is no primary key for referenced table \"%s\"", parent.Name)
			}
			c.RefColumns = parent.PrimaryKey
		}
		for _, name := range c.RefColumns {
			if columnIndex(pcols, name) < 0 {
				return c, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" referenced in foreign key constraint does not exist", name)
			}
		}
		if len(c.RefColumns) != len(c.Columns) {
			return c, sqlerr.New(sqlerr.InvalidForeignKey, "number of referencing and referenced columns for foreign key disagree")
		}
		if !referencesKey(parent, c.RefColumns) {
			return c, sqlerr.New(sqlerr.InvalidForeignKey, "there is no unique constraint matching given keys for referenced table \"%s\"", parent.Name)
		}
		for i, name := range c.Columns {
			ct, pt := cols[columnIndex(cols, name)].Type, pcols[columnIndex(pcols, c.RefColumns[i])].Type
			if !fkComparable(ct, pt) {
				cname := c.Name
				if cname == "" {
					cname = catalog.ObjectName(d.Name, strings.Join(c.Columns, "_"), "fkey")
				}
				return c, &sqlerr.Error{Code: sqlerr.DatatypeMismatch, Message: fmt.Sprintf("foreign key constraint \"%s\" cannot be implemented", cname),
					Detail: fmt.Sprintf("Key columns \"%s\" and \"%s\" are of incompatible types: %s and %s.", name, c.RefColumns[i], ct, pt)}
			}
		}
		c.OnDelete, c.OnUpdate = def.OnDelete, def.OnUpdate
	}
	return c, nil
}

// referencesKey reports whether cols (in any order) are exactly the
// primary key or a UNIQUE constraint's columns of table p.
func referencesKey(p *catalog.Descriptor, cols []string) bool {
	same := func(a []string) bool {
		if len(a) != len(cols) {
			return false
		}
		set := map[string]bool{}
		for _, x := range a {
			set[x] = true
		}
		for _, x := range cols {
			if !set[x] {
				return false
			}
		}
		return true
	}
	if same(p.PrimaryKey) {
		return true
	}
	for _, c := range p.Constraints {
		if c.Type == "u" && same(c.Columns) {
			return true
		}
	}
	return false
}

// fkComparable reports whether a referencing column of type a can match a
// referenced one of type b by equality, as PostgreSQL's foreign keys
// require (numbers with numbers, strings with strings, same type else).
func fkComparable(a, b types.Type) bool {
	if a == b {
		return true
	}
	family := func(t types.Type) string {
		switch t {
		case types.Int2, types.Int4, types.Int8, types.Numeric, types.Float4, types.Float8:
			return "number"
		case types.Text, types.Varchar:
			return "string"
		}
		return t.String()
	}
	return family(a) == family(b)
}

// chooseConstraintName makes PostgreSQL's name for an unnamed constraint:
// table_col1_col2_key (UNIQUE), table_col1_col2_fkey, table_col_check (a
// CHECK reading one column) or table_check, with a number after the label
// when the name is taken, cut to 63 bytes as PostgreSQL cuts it
// (catalog.ObjectName).
func chooseConstraintName(table string, c catalog.Constraint, taken map[string]bool) string {
	var cols, label string
	switch c.Type {
	case "u":
		cols, label = strings.Join(c.Columns, "_"), "key"
	case "f":
		cols, label = strings.Join(c.Columns, "_"), "fkey"
	default:
		if len(c.Columns) == 1 {
			cols = c.Columns[0]
		}
		label = "check"
	}
	name := catalog.ObjectName(table, cols, label)
	for i := 1; taken[name]; i++ {
		name = catalog.ObjectName(table, cols, fmt.Sprintf("%s%d", label, i))
	}
	return name
}

// chooseUniqueName is chooseConstraintName, passing over, for a UNIQUE
// constraint, the names of relations: its index takes the name, and
// PostgreSQL picks a free relation name for it.
func (e *Engine) chooseUniqueName(table string, c catalog.Constraint, taken map[string]bool) string {
	for {
		name := chooseConstraintName(table, c, taken)
		if c.Type != "u" || !e.relationNameTaken(name) {
			return name
		}
		taken[name] = true
	}
}

// checkColumns returns the table columns a CHECK expression reads, in
// table order.
func checkColumns(node ast.ExprNode, cols []types.Column) []string {
	v := &columnRefs{seen: map[string]bool{}}
	node.Accept(v)
	var out []string
	for _, c := range cols {
		if v.seen[c.Name] {
			out = append(out, c.Name)
		}
	}
	return out
}

type columnRefs struct{ seen map[string]bool }

func (v *columnRefs) Enter(n ast.Node) (ast.Node, bool) {
	if c, ok := n.(*ast.ColumnNameExpr); ok {
		v.seen[c.Name.Name.O] = true
	}
	return n, false
}

func (v *columnRefs) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// bindCheck binds a CHECK expression over a row of table d.
func bindCheck(d *catalog.Descriptor, cols []types.Column, text string) (expr.Expr, error) {
	st, err := front.Parse("SELECT " + text)
	if err != nil {
		return nil, err
	}
	sel, ok := st.Node.(*ast.SelectStmt)
	if !ok || sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.From != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "a CHECK constraint must be one expression: %s", text)
	}
	node := sel.Fields.Fields[0].Expr
	if astHasSubquery(node) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cannot use subquery in check constraint")
	}
	params := binder.NewParams(st, nil)
	b := binder.NewExprBinder(params)
	e, err := b.Bind(node, binder.TableScope(d.Name, cols))
	if err != nil {
		if se, ok := err.(*sqlerr.Error); ok {
			out := *se
			out.Position = 0
			return nil, &out
		}
		return nil, err
	}
	if expr.HasParams(e) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "a CHECK constraint cannot use parameters")
	}
	if t := e.Type(); t != types.Bool && t != types.Unknown {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of CHECK must be type boolean, not type %s", t)
	}
	if v := expr.VolatileCall(e); v != "" {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a CHECK constraint cannot call the volatile function %s", v).
			WithHint("A CHECK must give the same answer for a row every time it is evaluated.")
	}
	return e, nil
}

func astHasSubquery(node ast.ExprNode) bool {
	v := &subqueryFinder{}
	node.Accept(v)
	return v.found
}

type subqueryFinder struct{ found bool }

func (v *subqueryFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		v.found = true
	}
	return n, v.found
}

func (v *subqueryFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// checkRows enforces table d's CHECK constraints on the rows changes
// insert: a CHECK fails only when it is false (NULL passes).
func checkRows(d *catalog.Descriptor, cols []types.Column, changes []exec.Change) error {
	return newRowChecks(d, cols).check(changes)
}

// rowChecks are table d's CHECK constraints, bound at the first check and
// kept, so that a statement checking row by row binds them once.
type rowChecks struct {
	d      *catalog.Descriptor
	cols   []types.Column
	bound  bool
	checks []expr.Expr
	names  []string
}

func newRowChecks(d *catalog.Descriptor, cols []types.Column) *rowChecks {
	return &rowChecks{d: d, cols: cols}
}

// check is checkRows with the constraints bound once.
func (c *rowChecks) check(changes []exec.Change) error {
	if !c.bound {
		for _, con := range c.d.Constraints {
			if con.Type != "c" {
				continue
			}
			e, err := bindCheck(c.d, c.cols, con.Check)
			if err != nil {
				c.checks, c.names = nil, nil
				return err
			}
			c.checks = append(c.checks, e)
			c.names = append(c.names, con.Name)
		}
		c.bound = true
	}
	if len(c.checks) == 0 {
		return nil
	}
	for _, ch := range changes {
		if ch.Sign < 0 {
			continue
		}
		for i, e := range c.checks {
			v, err := e.Eval(ch.Row)
			if err != nil {
				return err
			}
			if !v.IsNull() && !v.Bool() {
				return &sqlerr.Error{Code: sqlerr.CheckViolation, Message: fmt.Sprintf("new row for relation \"%s\" violates check constraint \"%s\"", c.d.Name, c.names[i]),
					Detail: "Failing row contains " + formatRow(c.cols, ch.Row) + "."}
			}
		}
	}
	return nil
}
