package expr

import (
	"strconv"
	"strings"

	"streamdb/sqlerr"
	"streamdb/types"
)

// oidInputFunc is the last step of reading text as one of the OID alias
// types (regtype, regclass, regproc, regnamespace, regrole) when the text
// is known only as the statement runs (a parameter, a column): the
// catalog layer matches the names it knows first, and what reaches these
// functions is an OID written as digits or a name that does not exist,
// which is PostgreSQL's error for that kind of object.
func oidInputFunc(name string, args []Expr) (Expr, bool, error) {
	var missing func(s string) error
	switch name {
	case "regtypein":
		missing = func(s string) error { return sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", s) }
	case "regclassin":
		missing = func(s string) error { return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", s) }
	case "regprocin":
		missing = func(s string) error { return sqlerr.New(sqlerr.UndefinedFunction, "function %q does not exist", s) }
	case "regnamespacein":
		missing = func(s string) error { return sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", s) }
	case "regrolein":
		missing = func(s string) error { return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", s) }
	default:
		return nil, false, nil
	}
	if len(args) != 1 {
		return nil, true, wrongArgs(name, args)
	}
	a, err := castArgs(args, types.Text)
	if err != nil {
		return nil, true, err
	}
	return &Func{Name: name, Args: a, T: types.Int8, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		s := strings.TrimSpace(v[0].S)
		if n, err := strconv.ParseUint(s, 10, 32); err == nil && s[0] != '+' {
			return types.NewInt(int64(n)), nil
		}
		return types.Null, missing(v[0].S)
	})}, true, nil
}
