package binder

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/expr"
	"streamdb/front"
	"streamdb/sqlerr"
)

// noFunctionHint is PostgreSQL's hint when no function has the name and
// argument types of a call.
const noFunctionHint = "No function matches the given name and argument types. You might need to add explicit type casts."

// noSuchFunction is PostgreSQL's error for a call that no function of
// that name takes: it names the function with the types of the
// arguments as written (never how many the front layer passes on).
// usage, when not empty, is added to the hint as the right form.
func noSuchFunction(fn string, args []expr.Expr, usage string) *sqlerr.Error {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Type().String()
	}
	hint := noFunctionHint
	if usage != "" {
		hint += " Write " + usage
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", fn, strings.Join(names, ", ")).WithHint("%s", hint)
}

// writtenOrderedAggArgs gives the arguments of an ordered aggregate in the
// order its caller wrote them, from the form the front layer passes on
// (front/rewrite_ordered_agg.go): WITHIN GROUP's key comes first there
// and its direction last, PostgreSQL lists the direct arguments and then
// the key. A FILTER's wrapper around the first argument is taken off.
func writtenOrderedAggArgs(fn string, args []ast.ExprNode) []ast.ExprNode {
	out := append([]ast.ExprNode(nil), args...)
	if f, ok := out[0].(*ast.FuncCallExpr); ok && f.FnName.L == front.AggFilterFunc && len(f.Args) == 2 {
		out[0] = f.Args[1]
	}
	switch fn {
	case "mode", "percentile_cont", "percentile_disc":
		if len(out) >= 2 {
			direct := out[1 : len(out)-1]
			return append(append([]ast.ExprNode(nil), direct...), out[0])
		}
	}
	return out
}
