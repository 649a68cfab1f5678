package sql

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// ALTER TABLE ... ALTER COLUMN c [SET DATA] TYPE t [USING expr] rewrites
// the table's stored rows, each value converted as an assignment cast to
// t (PostgreSQL's error if one does not convert, and nothing changes),
// rebuilds the indexes on the column and checks the CHECK constraints on
// the converted rows, in the same Pebble batch as the new descriptor.
//
// The column keeps its member key: the table's changelog (read from the
// start by every view created later, and replayed after the state's
// position) keeps the values written under the old type, and they are
// decoded under the new one. So only a change under which every old
// value's JSON reads as its cast is taken (meta.TypeChangeKeepsMessages): a
// wider integer, numeric or text type, a longer varchar, any of the
// scalar types PostgreSQL prints as text to text. Others (text to
// integer, a narrower type, a USING that computes something else) are
// refused with 0A000 and the add/UPDATE/drop/rename recipe. As in
// PostgreSQL, a column a view reads keeps its type (0A000), and so does a
// column a generated column reads.

// alterColumnType applies ALTER COLUMN ... TYPE to the change.
func (a *columnChange) alterColumnType(act front.AlterAction) error {
	i := a.column(act.Column)
	if i < 0 {
		return a.noColumn(act.Column)
	}
	c := &a.New.Columns[i]
	if !a.isTable() {
		return sqlerr.New(sqlerr.FeatureNotSupported, "ALTER COLUMN ... TYPE on a stream is not supported").
			WithHint("A stream's columns read its producers' messages: create a new stream with the type you need over the same subject.")
	}
	nt, nm, err := types.ParseWithModifier(act.TypeName)
	if err != nil {
		return sqlerr.New(sqlerr.InvalidParameterValue, "column %q: %v", c.Name, err)
	}
	old, err := a.columnType(i)
	if err != nil {
		return err
	}
	if a.From[i] < 0 {
		return sqlerr.New(sqlerr.FeatureNotSupported, "ALTER COLUMN ... TYPE of column %q added in the same statement is not supported", c.Name).
			WithHint("Give the column its type in ADD COLUMN.")
	}
	if _, twice := a.Convert[a.From[i]]; twice {
		return sqlerr.New(sqlerr.FeatureNotSupported, "cannot alter type of column %q twice", c.Name)
	}
	if c.Generated != "" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "ALTER COLUMN ... TYPE of generated column %q is not supported", c.Name).
			WithHint("Drop the column and add it again with the new type.")
	}
	for _, g := range a.New.Columns {
		if g.Generated == "" {
			continue
		}
		if _, renamed, _ := front.RenameColumnRefs(g.Generated, c.Name, c.Name+"_"); renamed {
			return &sqlerr.Error{Code: sqlerr.FeatureNotSupported, Message: "cannot alter type of a column used by a generated column",
				Detail: fmt.Sprintf("Column %q is used by generated column %q.", c.Name, g.Name)}
		}
	}
	readers, err := a.s.e.columnReaders(a.Old, c.MemberKey())
	if err != nil {
		return err
	}
	if len(readers) > 0 {
		r := readers[0]
		return &sqlerr.Error{Code: sqlerr.FeatureNotSupported, Message: "cannot alter type of a column used by a view or rule",
			Detail: fmt.Sprintf("rule _RETURN on %s %s depends on column %q", relKindWord(r), r.Name, c.Name),
			Hint:   fmt.Sprintf("Drop %s %s, alter the column, then create it again.", relKindWord(r), r.Name)}
	}
	oldCols, err := a.Old.Schema()
	if err != nil {
		return err
	}
	src := a.From[i]
	var conv expr.Expr = &expr.ColRef{Idx: src, Name: c.Name, T: old.Type}
	if act.Using != "" {
		if conv, err = bindUsing(a.Old, oldCols, act.Using); err != nil {
			return err
		}
		if !isColumnCast(conv, src, nt) {
			return sqlerr.New(sqlerr.FeatureNotSupported, "ALTER COLUMN ... TYPE ... USING %s is not supported: only the column itself or a cast of it to %s", act.Using, act.TypeName).
				WithHint("%s", typeChangeRecipe(c.Name, act.TypeName, act.Using))
		}
	} else if old.Type.IsString() && !nt.IsString() {
		return &sqlerr.Error{Code: sqlerr.DatatypeMismatch, Message: fmt.Sprintf("column %q cannot be cast automatically to type %s", c.Name, types.TypeName(nt, nm)),
			Hint: fmt.Sprintf("You might need to specify \"USING %s::%s\".", c.Name, types.TypeName(nt, nm))}
	}
	if old.Type == nt && old.Mod == nm {
		return nil
	}
	if !meta.TypeChangeKeepsMessages(old.Type, old.Mod, nt, nm) {
		return sqlerr.New(sqlerr.FeatureNotSupported, "changing column %q from %s to %s is not supported", c.Name, types.TypeName(old.Type, old.Mod), types.TypeName(nt, nm)).
			WithHint("The table's changelog keeps the values written as %s, and views read them under the column's type. %s", types.TypeName(old.Type, old.Mod),
				typeChangeRecipe(c.Name, act.TypeName, act.Using))
	}
	cast, err := expr.CastWithModifier(&expr.ColRef{Idx: src, Name: c.Name, T: old.Type}, nt, nm, false)
	if err != nil {
		return err
	}
	if c.Default != "" {
		if _, err := a.s.bindDefault(c.Default, types.Column{Name: c.Name, Type: nt, Mod: nm}); err != nil {
			return err
		}
	}
	a.ConvertColumn(i, types.TypeName(nt, nm), cast)
	a.changed = true
	return nil
}

// typeChangeRecipe is the hint for a type change streamdb does not make.
func typeChangeRecipe(col, typ, using string) string {
	if using == "" {
		using = col + "::" + typ
	}
	return fmt.Sprintf("Add a column of the new type, fill it (UPDATE ... SET new = %s), drop %s and rename the new column to %s.", using, col, col)
}

// isColumnCast reports whether e is column src itself or a cast of it to
// t (USING c or USING c::t, as migration tools write).
func isColumnCast(e expr.Expr, src int, t types.Type) bool {
	if c, ok := e.(*expr.ColRef); ok {
		return c.Idx == src
	}
	f, ok := e.(*expr.Func)
	if !ok || !strings.HasPrefix(f.Name, "CAST") || f.T != t || len(f.Args) != 1 {
		return false
	}
	if inner, ok := f.Args[0].(*expr.Func); ok && strings.HasPrefix(inner.Name, "CAST") && inner.T == t {
		return isColumnCast(inner, src, t)
	}
	c, ok := f.Args[0].(*expr.ColRef)
	return ok && c.Idx == src
}

// bindUsing binds a USING expression over a row of table d.
func bindUsing(d *catalog.Descriptor, cols []types.Column, text string) (expr.Expr, error) {
	st, err := front.Parse("SELECT " + text)
	if err != nil {
		return nil, err
	}
	sel, ok := st.Node.(*ast.SelectStmt)
	if !ok || sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.From != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "USING must be one expression: %s", text)
	}
	b := binder.NewExprBinder(binder.NewParams(st, nil))
	e, err := b.Bind(sel.Fields.Fields[0].Expr, binder.TableScope(d.Name, cols))
	if err != nil {
		return nil, err
	}
	if expr.HasParams(e) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "USING cannot use parameters")
	}
	return e, nil
}

// bindTypeChecks binds, over the new columns, the CHECK constraints that
// read a column whose type changes (an error if one no longer binds, as
// PostgreSQL parses them again), for convertRow to check every row.
func (a *columnChange) bindTypeChecks() error {
	if len(a.Convert) == 0 {
		return nil
	}
	cols, err := a.New.Schema()
	if err != nil {
		return err
	}
	for _, c := range a.New.Constraints {
		if c.Type != "c" || !slices.ContainsFunc(c.Columns, a.converted) {
			continue
		}
		ck, err := bindCheck(a.New, cols, c.Check)
		if err != nil {
			return err
		}
		a.Checks = append(a.Checks, ck)
		a.CheckNames = append(a.CheckNames, c.Name)
	}
	return nil
}

// converted reports whether the change converts column name's values.
func (a *columnChange) converted(name string) bool {
	for i, src := range a.From {
		if _, ok := a.Convert[src]; ok && src >= 0 && a.New.Columns[i].Name == name {
			return true
		}
	}
	return false
}
