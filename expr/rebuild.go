package expr

import (
	"fmt"
	"strings"

	"streamdb/types"
)

// Rebuild makes again the call that a Func named name over args, of type
// t and modifier mod, was built as, so that a stored plan can be read
// back (package plan's plan records): operators by their constructor
// (Binary, Not, Negate, BitNot, IsNull, IsTruth, Case, Coalesce, NullIf, Cast,
// x op ANY/ALL), functions through Call. The result must be that same
// call: a constructor that would cast an argument again, or type the
// result otherwise, means the record does not match this binary, and
// Rebuild refuses instead of building something else.
func Rebuild(name string, infix bool, args []Expr, t types.Type, mod types.Modifier) (Expr, error) {
	e, err := rebuild(name, infix, args, t, mod)
	if err != nil {
		return nil, err
	}
	f, ok := e.(*Func)
	if ok && t == types.Text && f.T.IsArray() && f.Name == name && f.Infix == infix && changedArg(f.Args, args) < 0 {
		// A record written before arrays had types of their own (the
		// array constructor, string_to_array, ... were text): the view
		// keeps its text column, whose values are the array's text form
		// either way.
		return Cast(f, types.Text)
	}
	if !ok || f.Name != name || f.Infix != infix || f.T != t || f.Mod != mod || len(f.Args) != len(args) {
		return nil, fmt.Errorf("%s(%d arguments) of type %s rebuilds as %s", name, len(args), t, describeRebuilt(e))
	}
	if i := changedArg(f.Args, args); i >= 0 {
		return nil, fmt.Errorf("%s rebuilds with argument %d changed to %s", name, i+1, f.Args[i])
	}
	return f, nil
}

// changedArg is the index of the first argument of got that is not the
// same expression (by identity) as want's, or -1 when both lists hold the
// same arguments. When one list is a prefix of the other, the first index
// past the shorter one differs: a caller that indexes got with the result
// must have checked the lengths first.
func changedArg(got, want []Expr) int {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return i
		}
	}
	if len(got) != len(want) {
		return min(len(got), len(want))
	}
	return -1
}

func describeRebuilt(e Expr) string {
	if f, ok := e.(*Func); ok {
		return fmt.Sprintf("%s(%d arguments) of type %s", f.Name, len(f.Args), f.T)
	}
	return fmt.Sprintf("%T %s", e, e)
}

func rebuild(name string, infix bool, args []Expr, t types.Type, mod types.Modifier) (Expr, error) {
	n := len(args)
	switch {
	case infix && n == 2 && name == "IS NOT DISTINCT FROM":
		return Binary("<=>", args[0], args[1])
	case infix && n == 2:
		return Binary(name, args[0], args[1])
	case infix && n == 1 && name == "NOT":
		return Not(args[0])
	case infix && n == 1 && name == "-":
		return Negate(args[0])
	case infix && n == 1 && name == "~":
		return BitNot(args[0])
	case infix:
		return nil, fmt.Errorf("unknown operator %s with %d arguments", name, n)
	}
	if want, not, ok := isTruthOf(name); ok && n == 1 {
		return IsTruth(args[0], want, not)
	}
	switch {
	case name == "IS NULL" && n == 1:
		return IsNull(args[0], false), nil
	case name == "IS NOT NULL" && n == 1:
		return IsNull(args[0], true), nil
	case name == "CAST" && n == 1:
		return Cast(args[0], t)
	case strings.HasPrefix(name, "CAST(") && n == 1:
		// The binder's casts to a type with a size in a query are explicit
		// (an implicit one fits a value assigned by DML, never in a plan).
		return CastWithModifier(args[0], t, mod, true)
	case name == "CASE":
		var conds, results []Expr
		for i := 0; i+1 < n; i += 2 {
			conds, results = append(conds, args[i]), append(results, args[i+1])
		}
		var els Expr
		if n%2 == 1 {
			els = args[n-1]
		}
		return Case(conds, results, els)
	case name == "COALESCE":
		return Coalesce(args)
	case name == "NULLIF" && n == 2:
		return NullIf(args[0], args[1])
	case name == "array":
		return Call(ArrayFunc, args)
	}
	if op, kind, ok := strings.Cut(name, " "); ok && n == 2 && (kind == "ANY" || kind == "ALL") {
		e, _, err := anyOverArray([]Expr{args[0], &Const{D: types.NewString(op), T: types.Text},
			&Const{D: types.NewString(strings.ToLower(kind)), T: types.Text}, args[1]})
		return e, err
	}
	return Call(name, args)
}

// isTruthName names e IS [NOT] TRUE|FALSE by its test, so that the call
// can be rebuilt from its name (isTruthOf).
func isTruthName(want, not bool) string {
	s := "IS "
	if not {
		s += "NOT "
	}
	if want {
		return s + "TRUE"
	}
	return s + "FALSE"
}

// isTruthOf is the test isTruthName named.
func isTruthOf(name string) (want, not, ok bool) {
	for _, w := range []bool{true, false} {
		for _, n := range []bool{true, false} {
			if isTruthName(w, n) == name {
				return w, n, true
			}
		}
	}
	return false, false, false
}
