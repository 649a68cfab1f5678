package pgcatalog

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// pg_proc lists the built-in functions as PostgreSQL 15 does, for the ones
// streamdb has: the rows of PostgreSQL's pg_proc (BuiltinProcData) for the
// names streamdb implements, kept when streamdb has every argument type
// and, for a scalar function, when the function registry (expr.Call)
// accepts a call with those argument types. So a signature streamdb
// refuses is not listed, and a function the registry drops leaves pg_proc
// with it. The type input functions that pg_type names (typinput) are
// listed as well. Everything is in pg_catalog, so psql's \df lists
// nothing and \dfS or \df lower list these. pg_language lists the
// languages pg_proc's prolang names.

// Proc is one pg_proc row.
type Proc struct {
	OID  int64
	Name string
	// Kind is prokind ("f" function, "a" aggregate, "w" window),
	// Volatile provolatile, Parallel proparallel.
	Kind, Volatile, Parallel string
	RetSet                   bool
	Ret                      int64   // the result type's OID
	Args                     []int64 // the argument types' OIDs
	Src, Description         string
}

// procArgType maps the argument type OIDs the catalog uses to the type a
// probe call passes: streamdb's types by OID, names as text, OIDs as
// bigint, arrays as their text form (as streamdb carries them), and the
// polymorphic types as text or bigint.
func procArgType(oid int64) (types.Type, bool) {
	switch oid {
	case 19, 2276, 2776, 1009, 1003, 1007, 1022, 1187, 2277, 5078: // name, any, anynonarray, arrays
		return types.Text, true
	case 26, 2205, 2206, 2283, 5077: // oid, regclass, regtype, anyelement, anycompatible
		return types.Int8, true
	}
	t, ok := types.FromOID(uint32(oid))
	return t, ok && t != types.Unknown
}

// procNotInRegistry are the functions the session or the binder answers
// rather than expr.Call (catalog functions substituted before binding,
// set-returning functions in FROM).
func procNotInRegistry(name string) bool {
	switch name {
	case "generate_series", "unnest", "current_user", "session_user", "pg_get_userbyid", "set_config":
		return true
	}
	return CatalogFuncs[name]
}

// Procs lists pg_proc's rows: PostgreSQL's rows (BuiltinProcData) for
// the functions streamdb has, then the type input functions.
var Procs = sync.OnceValue(func() []Proc {
	var out []Proc
	for _, line := range strings.Split(strings.TrimSpace(BuiltinProcData), "\n") {
		f := strings.Split(line, "|")
		p := Proc{Name: f[1], Kind: f[2][:1], Volatile: f[2][1:2], Parallel: f[2][2:3], RetSet: f[2][3] == 't',
			Src: f[5], Description: f[6]}
		p.OID, _ = strconv.ParseInt(f[0], 10, 64)
		p.Ret, _ = strconv.ParseInt(f[3], 10, 64)
		ok := true
		var probe []expr.Expr
		for _, a := range strings.Fields(f[4]) {
			oid, _ := strconv.ParseInt(a, 10, 64)
			p.Args = append(p.Args, oid)
			t, known := procArgType(oid)
			ok = ok && known
			probe = append(probe, &expr.ColRef{Idx: len(probe), T: t})
		}
		if _, known := procArgType(p.Ret); !known && p.Ret != 2249 { // record
			ok = false
		}
		if ok && p.Kind == "f" && !procNotInRegistry(p.Name) {
			_, err := expr.Call(p.Name, probe)
			ok = err == nil
		}
		if ok {
			out = append(out, p)
		}
	}
	for _, t := range Types {
		oid, ok := ProcOIDs[t.Input]
		if !ok || t.Input == "array_in" && t.Elem != 16 {
			continue // array_in once
		}
		out = append(out, Proc{OID: oid, Name: t.Input, Kind: "f", Volatile: "i", Parallel: "s", Ret: t.OID,
			Args: []int64{2275, 26, 23}, Src: t.Input})
	}
	return out
})

// ProcsNamed returns the built-in functions called name.
func ProcsNamed(name string) []Proc {
	var out []Proc
	for _, p := range Procs() {
		if p.Name == name {
			out = append(out, p)
		}
	}
	return out
}

// ProcTypeName is a type as pg_get_function_arguments and regprocedure
// print it.
func ProcTypeName(oid int64) string {
	switch oid {
	case 2275:
		return "cstring"
	case 2276:
		return `"any"`
	case 2277:
		return "anyarray"
	case 2283:
		return "anyelement"
	case 2776:
		return "anynonarray"
	case 5077:
		return "anycompatible"
	case 5078:
		return "anycompatiblearray"
	case 2249:
		return "record"
	}
	if t, ok := types.FromOID(uint32(oid)); ok && t != types.Unknown {
		return t.String()
	}
	if t, ok := TypeByOID(oid); ok {
		if t.Elem != 0 {
			return ProcTypeName(t.Elem) + "[]"
		}
		return t.Name
	}
	return fmt.Sprint(oid)
}

// Arguments is pg_get_function_arguments: the argument types, comma
// separated.
func (p Proc) Arguments() string {
	names := make([]string, len(p.Args))
	for i, a := range p.Args {
		names[i] = ProcTypeName(a)
	}
	return strings.Join(names, ", ")
}

// Result is pg_get_function_result.
func (p Proc) Result() string {
	if p.RetSet {
		return "SETOF " + ProcTypeName(p.Ret)
	}
	return ProcTypeName(p.Ret)
}

// ResolveProc reads a regproc (a name) or regprocedure (a name with its
// argument types) as PostgreSQL does: 42883 for no such function, 42725
// for a regproc name that several functions have.
func ResolveProc(typ, name string) (int64, error) {
	fname, argText, hasArgs := strings.Cut(name, "(")
	fname = strings.TrimPrefix(UnquoteQualified(strings.TrimSpace(fname)), "pg_catalog.")
	procs := ProcsNamed(fname)
	if typ == "regprocedure" || hasArgs {
		if !hasArgs || !strings.HasSuffix(strings.TrimSpace(argText), ")") {
			return 0, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", typ, name).
				WithHint("Write the function's name and argument types, as in 'lower(text)'.")
		}
		var want []int64
		for _, a := range strings.Split(strings.TrimSuffix(strings.TrimSpace(argText), ")"), ",") {
			if a = strings.TrimSpace(a); a == "" {
				continue
			}
			oid, err := ResolveType(a)
			if err != nil {
				return 0, err
			}
			want = append(want, oid)
		}
		for _, p := range procs {
			if fmt.Sprint(p.Args) == fmt.Sprint(want) {
				return p.OID, nil
			}
		}
		return 0, sqlerr.New(sqlerr.UndefinedFunction, "function %q does not exist", name)
	}
	switch len(procs) {
	case 0:
		return 0, sqlerr.New(sqlerr.UndefinedFunction, "function %q does not exist", name)
	case 1:
		return procs[0].OID, nil
	}
	return 0, sqlerr.New(sqlerr.AmbiguousFunction, "more than one function named %q", name)
}

// ProcDisplay is how PostgreSQL prints a regproc (the name) or a
// regprocedure (the name and argument types).
func ProcDisplay(typ string, oid int64) (string, bool) {
	for _, p := range Procs() {
		if p.OID == oid {
			if typ == "regprocedure" {
				return p.Name + "(" + p.Arguments() + ")", true
			}
			return p.Name, true
		}
	}
	return "", false
}

func init() {
	register("pg_catalog.pg_proc", cols("oid", types.Int8, "proname", types.Text, "pronamespace", types.Int8, "proowner", types.Int8,
		"prolang", types.Int8, "procost", types.Float4, "prorows", types.Float4, "provariadic", types.Int8,
		"prosupport", types.Text, "prokind", types.Text, "prosecdef", types.Bool, "proleakproof", types.Bool,
		"proisstrict", types.Bool, "proretset", types.Bool, "provolatile", types.Text, "proparallel", types.Text,
		"pronargs", types.Int2, "pronargdefaults", types.Int2, "prorettype", types.Int8, "proargtypes", types.Text,
		"proallargtypes", types.Text, "proargmodes", types.Text, "proargnames", types.Text,
		"proargdefaults", types.Text, "protrftypes", types.Text, "prosrc", types.Text, "probin", types.Text,
		"prosqlbody", types.Text, "proconfig", types.Text, "proacl", types.Text),
		func(Engine) []types.Row {
			var rows []types.Row
			for _, p := range Procs() {
				args := make([]string, len(p.Args))
				for i, a := range p.Args {
					args[i] = strconv.FormatInt(a, 10)
				}
				rows = append(rows, types.Row{i(p.OID), s(p.Name), i(NamespacePgCatalog), i(10),
					i(12), types.NewFloat(1), types.NewFloat(0), i(0),
					s("-"), s(p.Kind), b(false), b(false),
					b(true), b(p.RetSet), s(p.Volatile), s(p.Parallel),
					i(int64(len(p.Args))), i(0), i(p.Ret), s(strings.Join(args, " ")),
					types.Null, types.Null, types.Null,
					types.Null, types.Null, s(p.Src), types.Null,
					types.Null, types.Null, types.Null})
			}
			return rows
		})
	// pg_language: the languages pg_proc's prolang names (all built-in
	// functions are "internal").
	register("pg_catalog.pg_language", cols("oid", types.Int8, "lanname", types.Text, "lanowner", types.Int8, "lanispl", types.Bool,
		"lanpltrusted", types.Bool, "lanplcallfoid", types.Int8, "laninline", types.Int8,
		"lanvalidator", types.Int8, "lanacl", types.Text),
		func(Engine) []types.Row {
			var rows []types.Row
			for _, l := range []struct {
				oid     int64
				name    string
				trusted bool
			}{{12, "internal", false}, {13, "c", false}, {14, "sql", true}} {
				rows = append(rows, types.Row{i(l.oid), s(l.name), i(10), b(false),
					b(l.trusted), i(0), i(0), i(0), types.Null})
			}
			return rows
		})
}
