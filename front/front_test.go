package front

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"streamdb/sqlerr"
)

// TestDataDriven runs the files under testdata. Commands:
//
//	split    each statement as "[offset] text"
//	parse    the parsed statement (rewritten text, params, windows, node)
//	ast      the TiDB AST of the rewritten query, one node a line
func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			runFile(t, f, func(t *testing.T, c *testCase) string {
				switch c.cmd {
				case "split":
					var b strings.Builder
					for _, p := range SplitPieces(c.input) {
						fmt.Fprintf(&b, "[%d] %s\n", p.Offset, p.Text)
					}
					return b.String()
				case "parse":
					st, err := Parse(c.input)
					if err != nil {
						return formatError(err)
					}
					checkParams(t, c.pos, st)
					return printStatement(st)
				case "ast":
					st, err := Parse(c.input)
					if err != nil {
						return formatError(err)
					}
					checkParams(t, c.pos, st)
					return printTree(astOf(st))
				}
				t.Fatalf("%s: unknown command %q", c.pos, c.cmd)
				return ""
			})
		})
	}
}

func formatError(err error) string {
	e := sqlerr.From(err)
	s := fmt.Sprintf("error %s", e.Code)
	if e.Position > 0 {
		s += fmt.Sprintf(" at %d", e.Position)
	}
	s += ": " + e.Message
	if e.Hint != "" {
		s += "\nhint: " + e.Hint
	}
	return s
}

// astOf returns the TiDB node of a statement (the query of a view).
func astOf(st *Statement) ast.Node {
	switch n := st.Node.(type) {
	case ast.Node:
		return n
	case *CreateMaterializedView:
		return n.Query
	case *CreateView:
		return n.Query
	case *Explain:
		return astOf(n.Stmt)
	}
	return nil
}

// checkParams asserts that Params has one entry per ParamMarkerExpr, that
// the markers' offsets are the ?s of the rewritten text in order, and that
// NumParams covers them.
func checkParams(t *testing.T, pos string, st *Statement) {
	if e, ok := st.Node.(*Explain); ok {
		st = e.Stmt
	}
	n := astOf(st)
	if n == nil {
		return
	}
	var markers []*test_driver.ParamMarkerExpr
	n.Accept(visitor(func(n ast.Node) {
		if m, ok := n.(*test_driver.ParamMarkerExpr); ok {
			markers = append(markers, m)
		}
	}))
	sort.Slice(markers, func(i, j int) bool { return markers[i].Offset < markers[j].Offset })
	if len(markers) != len(st.Params) {
		t.Errorf("%s: %d markers, %d params", pos, len(markers), len(st.Params))
		return
	}
	for i, m := range markers {
		// The markers of a LIMIT or OFFSET expression sit on the digits
		// of its placeholder (fillLimitExprs).
		if c := st.Rewritten[m.Offset]; c != '?' && (c < '0' || c > '9') {
			t.Errorf("%s: marker %d at %d is not a ? in %q", pos, i, m.Offset, st.Rewritten)
		}
		if st.Params[i] > st.NumParams {
			t.Errorf("%s: param $%d above NumParams %d", pos, st.Params[i], st.NumParams)
		}
	}
}

// visitor adapts a function to ast.Visitor.
type visitor func(ast.Node)

func (v visitor) Enter(n ast.Node) (ast.Node, bool) { v(n); return n, false }
func (v visitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// treePrinter prints an AST one node a line, indented by depth.
type treePrinter struct {
	b     strings.Builder
	depth int
}

func (p *treePrinter) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.ColumnName, *ast.FieldList, *ast.TableRefsClause, *ast.OrderByClause, *ast.GroupByClause:
		return n, false // noise: their parents say enough
	}
	fmt.Fprintf(&p.b, "%s%s\n", strings.Repeat("  ", p.depth), describe(n))
	p.depth++
	return n, false
}

func (p *treePrinter) Leave(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.ColumnName, *ast.FieldList, *ast.TableRefsClause, *ast.OrderByClause, *ast.GroupByClause:
		return n, true
	}
	p.depth--
	return n, true
}

func printTree(n ast.Node) string {
	if n == nil {
		return "no TiDB node"
	}
	p := &treePrinter{}
	n.Accept(p)
	return p.b.String()
}

// describe names a node with the details that show its shape.
func describe(n ast.Node) string {
	name := strings.TrimPrefix(reflect.TypeOf(n).String(), "*ast.")
	switch x := n.(type) {
	case *ast.BinaryOperationExpr:
		return fmt.Sprintf("%s %s", name, x.Op)
	case *ast.UnaryOperationExpr:
		return fmt.Sprintf("%s %s", name, x.Op)
	case *ast.FuncCallExpr:
		return fmt.Sprintf("%s %s", name, x.FnName.O)
	case *ast.AggregateFuncExpr:
		return fmt.Sprintf("%s %s", name, x.F)
	case *ast.ColumnNameExpr:
		return fmt.Sprintf("%s %s", name, x.Name)
	case *ast.TableName:
		return fmt.Sprintf("%s %s", name, x.Name.O)
	case *ast.TableSource:
		return fmt.Sprintf("%s as=%q", name, x.AsName.O)
	case *ast.Join:
		return fmt.Sprintf("%s tp=%d", name, x.Tp)
	case *ast.ByItem:
		return fmt.Sprintf("%s desc=%v", name, x.Desc)
	case *ast.PatternRegexpExpr:
		return fmt.Sprintf("%s not=%v", name, x.Not)
	case *ast.PatternLikeOrIlikeExpr:
		return fmt.Sprintf("%s not=%v", name, x.Not)
	case *ast.IsNullExpr:
		return fmt.Sprintf("%s not=%v", name, x.Not)
	case *ast.SelectField:
		if x.AsName.O != "" {
			return fmt.Sprintf("%s as=%q", name, x.AsName.O)
		}
	case *test_driver.ParamMarkerExpr:
		return fmt.Sprintf("ParamMarkerExpr offset=%d", x.Offset)
	case *test_driver.ValueExpr:
		return fmt.Sprintf("ValueExpr %s", restore(x))
	}
	return name
}

// restore prints a node back as SQL, with brackets around every binary
// operation so that the tree's shape shows.
func restore(n ast.Node) string {
	var b strings.Builder
	flags := format.RestoreStringSingleQuotes | format.RestoreKeyWordLowercase |
		format.RestoreNameDoubleQuotes | format.RestoreSpacesAroundBinaryOperation |
		format.RestoreBracketAroundBinaryOperation | format.RestoreStringWithoutCharset
	if err := n.Restore(format.NewRestoreCtx(flags, &b)); err != nil {
		return "restore error: " + err.Error()
	}
	return b.String()
}

// printStatement prints a Statement for the parse command.
func printStatement(st *Statement) string {
	var b strings.Builder
	printStmtTo(&b, st, "")
	return b.String()
}

func printStmtTo(b *strings.Builder, st *Statement, indent string) {
	if st.Rewritten != "" {
		fmt.Fprintf(b, "%srewritten: %s\n", indent, st.Rewritten)
	}
	if len(st.Params) > 0 || st.NumParams > 0 {
		fmt.Fprintf(b, "%sparams: %v of %d\n", indent, st.Params, st.NumParams)
	}
	if st.WithTies {
		fmt.Fprintf(b, "%swith ties\n", indent)
	}
	var names []string
	for name := range st.Windows {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(b, "%swindow %s: %s\n", indent, name, printValue(reflect.ValueOf(st.Windows[name]), indent))
	}
	if st.AsOf != nil {
		fmt.Fprintf(b, "%sas of: %s\n", indent, printValue(reflect.ValueOf(st.AsOf), indent))
	}
	if st.InsertAlias != "" {
		fmt.Fprintf(b, "%sinsert alias: %s\n", indent, st.InsertAlias)
	}
	if st.DMLJoin {
		fmt.Fprintf(b, "%sdml join: true\n", indent)
	}
	if st.OnConflict != nil {
		fmt.Fprintf(b, "%son conflict: %s\n", indent, printValue(reflect.ValueOf(st.OnConflict), indent))
	}
	switch n := st.Node.(type) {
	case ast.StmtNode:
		fmt.Fprintf(b, "%s%s\n", indent, strings.TrimPrefix(reflect.TypeOf(n).String(), "*ast."))
	default:
		fmt.Fprintf(b, "%s%s\n", indent, printValue(reflect.ValueOf(n), indent))
	}
}

// printValue prints a node: a struct as Name{Field: value, ...} without zero
// fields, slices of structs and nested statements on lines of their own.
func printValue(v reflect.Value, indent string) string {
	if !v.IsValid() {
		return "<nil>"
	}
	if n, ok := v.Interface().(ast.Node); ok && v.Kind() == reflect.Interface || ok && v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "<nil>"
		}
		return restore(n)
	}
	if s, ok := v.Interface().(fmt.Stringer); ok && v.Kind() != reflect.Pointer && v.Kind() != reflect.Struct {
		return s.String()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "<nil>"
		}
		return printValue(v.Elem(), indent)
	case reflect.Struct:
		var parts []string
		var lines []string
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if f.IsZero() {
				continue
			}
			name := v.Type().Field(i).Name
			if inner, ok := f.Interface().(*Statement); ok {
				var b strings.Builder
				printStmtTo(&b, inner, indent+"    ")
				lines = append(lines, fmt.Sprintf("%s  %s:\n%s", indent, name, strings.TrimRight(b.String(), "\n")))
				continue
			}
			if f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct {
				for j := 0; j < f.Len(); j++ {
					lines = append(lines, fmt.Sprintf("%s  %s: %s", indent, name, printValue(f.Index(j), indent+"  ")))
				}
				continue
			}
			parts = append(parts, fmt.Sprintf("%s: %s", name, printValue(f, indent)))
		}
		s := v.Type().Name() + "{" + strings.Join(parts, ", ") + "}"
		if len(lines) > 0 {
			s += "\n" + strings.Join(lines, "\n")
		}
		return s
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%s", k, printValue(v.MapIndex(k), indent)))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case reflect.Slice:
		var parts []string
		for i := 0; i < v.Len(); i++ {
			parts = append(parts, printValue(v.Index(i), indent))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case reflect.String:
		return fmt.Sprintf("%q", v.String())
	}
	return fmt.Sprint(v.Interface())
}
