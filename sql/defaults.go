package sql

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Column defaults: what INSERT (VALUES, DEFAULT VALUES, the DEFAULT
// keyword, INSERT ... SELECT) and COPY put in a table column they are not
// given. A column's DEFAULT is kept as SQL text and bound again for each
// statement, so that it names objects (sequences) as they are when the
// statement runs; an identity column's default is nextval of its
// sequence. Defaults are evaluated once per row, in row order.

// columnDefaults binds the defaults of the relation's columns: out[i] is
// column i's, nil for none (NULL).
func (s *session) columnDefaults(desc *catalog.Descriptor, cols []types.Column) ([]expr.Expr, error) {
	out := make([]expr.Expr, len(cols))
	if desc.Kind != catalog.KindTable {
		return out, nil
	}
	for i, c := range desc.Columns {
		var err error
		switch {
		case c.Identity != "":
			out[i], err = binder.IdentityNextval(s.params(nil), quoteIdent(c.IdentitySequence))
		case c.Default != "":
			out[i], err = s.bindDefault(c.Default, cols[i])
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// bindDefault binds a column's DEFAULT expression, cast to the column's
// type.
func (s *session) bindDefault(text string, col types.Column) (expr.Expr, error) {
	st, err := front.Parse("SELECT " + text)
	if err != nil {
		return nil, defaultError(col, err)
	}
	sel, ok := st.Node.(*ast.SelectStmt)
	if !ok || sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.From != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "the default of column \"%s\" is not one expression: %s", col.Name, text)
	}
	if _, err := s.substituteCatalogFunctions(sel); err != nil {
		return nil, defaultError(col, err)
	}
	node := sel.Fields.Fields[0].Expr
	params := s.params(st)
	b := binder.NewExprBinder(params)
	e, err := b.Bind(node, nil)
	if err != nil {
		return nil, defaultError(col, err)
	}
	if expr.HasParams(e) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "the default of column \"%s\" cannot use parameters", col.Name)
	}
	return binder.AssignTo(e, col, node, params)
}

// defaultError says which column's default failed.
func defaultError(col types.Column, err error) error {
	if e, ok := err.(*sqlerr.Error); ok {
		out := *e
		out.Position = 0
		if out.Detail == "" {
			out.Detail = "In the default of column \"" + col.Name + "\"."
		}
		return &out
	}
	return err
}

// identityOverride refuses an explicit value for a GENERATED ALWAYS
// identity column unless the INSERT says OVERRIDING SYSTEM VALUE, and
// reports whether OVERRIDING USER VALUE makes an explicit value give way
// to the column's default.
func identityOverride(desc *catalog.Descriptor, col int, overriding string) (useDefault bool, err error) {
	c := desc.Columns[col]
	if c.Identity == "" {
		return false, nil
	}
	switch {
	case overriding == "user":
		return true, nil
	case c.Identity == front.IdentityAlways && overriding != "system":
		return false, &sqlerr.Error{Code: sqlerr.GeneratedAlways,
			Message: "cannot insert a non-DEFAULT value into column \"" + c.Name + "\"",
			Detail:  "Column \"" + c.Name + "\" is an identity column defined as GENERATED ALWAYS.",
			Hint:    "Use OVERRIDING SYSTEM VALUE to override."}
	}
	return false, nil
}

// fillDefaults puts the defaults of the columns not in target into rows
// (COPY with a column list), row by row.
func (s *session) fillDefaults(d *catalog.Descriptor, cols []types.Column, target []int, rows []types.Row) error {
	fill, err := s.defaultFiller(d, cols, target)
	if err != nil {
		return err
	}
	return fill(rows)
}

// defaultFiller binds the defaults of the columns of d that target leaves
// out once, for one statement (now() is its time), and returns what fills
// them into rows, batch after batch, in row order.
func (s *session) defaultFiller(d *catalog.Descriptor, cols []types.Column, target []int) (func(rows []types.Row) error, error) {
	defaults, err := s.columnDefaults(d, cols)
	if err != nil {
		return nil, err
	}
	for _, t := range target {
		defaults[t] = nil
	}
	stmtTime := time.Now()
	for j, e := range defaults {
		if e != nil {
			defaults[j] = expr.BindStatementTime(e, stmtTime)
		}
	}
	return func(rows []types.Row) error { return fillRowDefaults(defaults, cols, rows) }, nil
}

func fillRowDefaults(defaults []expr.Expr, cols []types.Column, rows []types.Row) error {
	for _, row := range rows {
		for j, e := range defaults {
			if e == nil {
				continue
			}
			v, err := e.Eval(nil)
			if err != nil {
				return err
			}
			if row[j], err = expr.CastDatum(v, cols[j].Type); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkDefaults binds the DEFAULT expressions of a new table's columns, so
// that CREATE TABLE refuses one that cannot work (a value of the wrong
// type, a relation that does not exist).
func (s *session) checkDefaults(n *front.CreateSource) error {
	if n.Kind != front.KindTable || n.AppendOnly {
		return nil
	}
	for _, c := range n.Columns {
		if c.Default == nil {
			continue
		}
		_, mod, err := types.ParseWithModifier(c.TypeName)
		if err != nil {
			return err
		}
		if _, err := s.bindDefault(c.DefaultText, types.Column{Name: c.Name, Type: c.Type, Mod: mod}); err != nil {
			return err
		}
	}
	return nil
}

// columnDefault is column i's default (UPDATE ... SET col = DEFAULT): a
// typed NULL when it has none.
func (s *session) columnDefault(desc *catalog.Descriptor, cols []types.Column, i int) (expr.Expr, error) {
	defaults, err := s.columnDefaults(desc, cols)
	if err != nil {
		return nil, err
	}
	if defaults[i] == nil {
		return &expr.Const{D: types.Null, T: cols[i].Type}, nil
	}
	return defaults[i], nil
}

// updateIdentity refuses an UPDATE that sets a GENERATED ALWAYS identity
// column to anything but DEFAULT.
func updateIdentity(desc *catalog.Descriptor, i int) error {
	c := desc.Columns[i]
	if c.Identity != front.IdentityAlways {
		return nil
	}
	return &sqlerr.Error{Code: sqlerr.GeneratedAlways,
		Message: "column \"" + c.Name + "\" can only be updated to DEFAULT",
		Detail:  "Column \"" + c.Name + "\" is an identity column defined as GENERATED ALWAYS."}
}

// storedDefault is the text a column's DEFAULT is kept (and shown, in
// \d, pg_attrdef and information_schema.columns) as: PostgreSQL's form
// of the common literals, so that tools read what they read from
// PostgreSQL: a string literal cast to the column's type ('x'::text), a
// negative number cast to its type ('-1'::integer), CURRENT_TIMESTAMP
// and the other SQL-standard time words upper-cased, true and false
// lower-cased. DEFAULT NULL is no default, as in PostgreSQL. Other
// expressions keep the text as written.
func storedDefault(text, typeName string) string {
	t := strings.TrimSpace(text)
	lower := strings.ToLower(t)
	switch lower {
	case "null":
		return ""
	case "true", "false":
		return lower
	case "current_timestamp", "current_date", "current_time", "localtimestamp", "localtime", "current_user", "session_user":
		return strings.ToUpper(lower)
	}
	if isStringLiteral(t) {
		typ, mod, err := types.ParseWithModifier(typeName)
		if err != nil {
			return t
		}
		name := typ.String()
		if mod.Fixed {
			name = "bpchar"
		}
		return t + "::" + name
	}
	if num, ok := strings.CutPrefix(t, "-"); ok && isUnsignedNumber(strings.TrimSpace(num)) {
		num = strings.TrimSpace(num)
		name := "numeric"
		if v, err := strconv.ParseInt("-"+num, 10, 64); err == nil {
			name = "bigint"
			if v >= math.MinInt32 {
				name = "integer"
			}
		}
		return "'-" + num + "'::" + name
	}
	return t
}

// isStringLiteral reports whether s is one plain '...' literal.
func isStringLiteral(s string) bool {
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return false
	}
	body := s[1 : len(s)-1]
	return !strings.Contains(strings.ReplaceAll(body, "''", ""), "'")
}

// isUnsignedNumber reports whether s is an unsigned decimal number.
func isUnsignedNumber(s string) bool {
	if s == "" {
		return false
	}
	dot := false
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0:
			dot = true
		default:
			return false
		}
	}
	return true
}
