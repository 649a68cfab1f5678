package sql

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"streamdb/expr"
	"streamdb/pgcatalog"
	"streamdb/sqlerr"
	"streamdb/types"
)

// pg_proc lists the built-in functions as PostgreSQL 15 does, for the ones
// streamdb has: the rows of PostgreSQL's pg_proc (pgcatalog.BuiltinProcData)
// for the names streamdb implements, kept when streamdb has every argument
// type and, for a scalar function, when the function registry
// (expr.Call) accepts a call with those argument types. So a signature
// streamdb refuses is not listed, and a function the registry drops
// leaves pg_proc with it. The type input functions that pg_type names
// (typinput) are listed as well. Everything is in pg_catalog, so psql's
// \df lists nothing and \dfS or \df lower list these.

// pgProc is one pg_proc row.
type pgProc struct {
	oid                 int64
	name                string
	kind, volatile, par string
	retset              bool
	ret                 int64
	args                []int64
	src, description    string
}

// pgProcArgType maps the argument type OIDs the catalog uses to the type a
// probe call passes: streamdb's types by OID, names as text, OIDs as
// bigint, arrays as their text form (as streamdb carries them), and the
// polymorphic types as text or bigint.
func pgProcArgType(oid int64) (types.Type, bool) {
	switch oid {
	case 19, 2276, 2776, 1009, 1003, 1007, 1022, 1187, 2277, 5078: // name, any, anynonarray, arrays
		return types.Text, true
	case 26, 2205, 2206, 2283, 5077: // oid, regclass, regtype, anyelement, anycompatible
		return types.Int8, true
	}
	t, ok := types.FromOID(uint32(oid))
	return t, ok && t != types.Unknown
}

// pgProcNotInRegistry are the functions the session or the binder answers
// rather than expr.Call (catalog functions substituted before binding,
// set-returning functions in FROM).
func pgProcNotInRegistry(name string) bool {
	switch name {
	case "generate_series", "unnest", "current_user", "session_user", "pg_get_userbyid", "set_config":
		return true
	}
	return catalogFuncNames[name]
}

var builtinProcs = sync.OnceValue(func() []pgProc {
	var out []pgProc
	for _, line := range strings.Split(strings.TrimSpace(pgcatalog.BuiltinProcData), "\n") {
		f := strings.Split(line, "|")
		p := pgProc{name: f[1], kind: f[2][:1], volatile: f[2][1:2], par: f[2][2:3], retset: f[2][3] == 't',
			src: f[5], description: f[6]}
		p.oid, _ = strconv.ParseInt(f[0], 10, 64)
		p.ret, _ = strconv.ParseInt(f[3], 10, 64)
		ok := true
		var probe []expr.Expr
		for _, a := range strings.Fields(f[4]) {
			oid, _ := strconv.ParseInt(a, 10, 64)
			p.args = append(p.args, oid)
			t, known := pgProcArgType(oid)
			ok = ok && known
			probe = append(probe, &expr.ColRef{Idx: len(probe), T: t})
		}
		if _, known := pgProcArgType(p.ret); !known && p.ret != 2249 { // record
			ok = false
		}
		if ok && p.kind == "f" && !pgProcNotInRegistry(p.name) {
			_, err := expr.Call(p.name, probe)
			ok = err == nil
		}
		if ok {
			out = append(out, p)
		}
	}
	for _, t := range pgcatalog.Types {
		oid, ok := pgcatalog.ProcOIDs[t.Input]
		if !ok || t.Input == "array_in" && t.Elem != 16 {
			continue // array_in once
		}
		out = append(out, pgProc{oid: oid, name: t.Input, kind: "f", volatile: "i", par: "s", ret: t.OID,
			args: []int64{2275, 26, 23}, src: t.Input})
	}
	return out
})

// procsNamed returns the built-in functions called name.
func procsNamed(name string) []pgProc {
	var out []pgProc
	for _, p := range builtinProcs() {
		if p.name == name {
			out = append(out, p)
		}
	}
	return out
}

// procTypeName is a type as pg_get_function_arguments and regprocedure
// print it.
func procTypeName(oid int64) string {
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
	if t, ok := pgcatalog.TypeByOID(oid); ok {
		if t.Elem != 0 {
			return procTypeName(t.Elem) + "[]"
		}
		return t.Name
	}
	return fmt.Sprint(oid)
}

// arguments is pg_get_function_arguments: the argument types, comma
// separated.
func (p pgProc) arguments() string {
	names := make([]string, len(p.args))
	for i, a := range p.args {
		names[i] = procTypeName(a)
	}
	return strings.Join(names, ", ")
}

// result is pg_get_function_result.
func (p pgProc) result() string {
	if p.retset {
		return "SETOF " + procTypeName(p.ret)
	}
	return procTypeName(p.ret)
}

// resolveProc reads a regproc (a name) or regprocedure (a name with its
// argument types) as PostgreSQL does: 42883 for no such function, 42725
// for a regproc name that several functions have.
func (e *Engine) resolveProc(typ, name string) (int64, error) {
	fname, argText, hasArgs := strings.Cut(name, "(")
	fname = strings.TrimPrefix(unquoteQualified(strings.TrimSpace(fname)), "pg_catalog.")
	procs := procsNamed(fname)
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
			oid, err := e.resolveOID("regtype", a)
			if err != nil {
				return 0, err
			}
			want = append(want, oid)
		}
		for _, p := range procs {
			if fmt.Sprint(p.args) == fmt.Sprint(want) {
				return p.oid, nil
			}
		}
		return 0, sqlerr.New(sqlerr.UndefinedFunction, "function %q does not exist", name)
	}
	switch len(procs) {
	case 0:
		return 0, sqlerr.New(sqlerr.UndefinedFunction, "function %q does not exist", name)
	case 1:
		return procs[0].oid, nil
	}
	return 0, sqlerr.New(sqlerr.AmbiguousFunction, "more than one function named %q", name)
}

// procDisplay is how PostgreSQL prints a regproc (the name) or a
// regprocedure (the name and argument types).
func procDisplay(typ string, oid int64) (string, bool) {
	for _, p := range builtinProcs() {
		if p.oid == oid {
			if typ == "regprocedure" {
				return p.name + "(" + p.arguments() + ")", true
			}
			return p.name, true
		}
	}
	return "", false
}

func init() {
	pgSystemTables["pg_catalog.pg_proc"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "proname", types.Text, "pronamespace", types.Int8, "proowner", types.Int8,
			"prolang", types.Int8, "procost", types.Float4, "prorows", types.Float4, "provariadic", types.Int8,
			"prosupport", types.Text, "prokind", types.Text, "prosecdef", types.Bool, "proleakproof", types.Bool,
			"proisstrict", types.Bool, "proretset", types.Bool, "provolatile", types.Text, "proparallel", types.Text,
			"pronargs", types.Int2, "pronargdefaults", types.Int2, "prorettype", types.Int8, "proargtypes", types.Text,
			"proallargtypes", types.Text, "proargmodes", types.Text, "proargnames", types.Text,
			"proargdefaults", types.Text, "protrftypes", types.Text, "prosrc", types.Text, "probin", types.Text,
			"prosqlbody", types.Text, "proconfig", types.Text, "proacl", types.Text),
		rows: func(*Engine) []types.Row {
			var rows []types.Row
			for _, p := range builtinProcs() {
				args := make([]string, len(p.args))
				for i, a := range p.args {
					args[i] = strconv.FormatInt(a, 10)
				}
				rows = append(rows, types.Row{intD(p.oid), str(p.name), intD(oidPgCatalog), intD(10),
					intD(12), types.NewFloat(1), types.NewFloat(0), intD(0),
					str("-"), str(p.kind), types.NewBool(false), types.NewBool(false),
					types.NewBool(true), types.NewBool(p.retset), str(p.volatile), str(p.par),
					intD(int64(len(p.args))), intD(0), intD(p.ret), str(strings.Join(args, " ")),
					types.Null, types.Null, types.Null,
					types.Null, types.Null, str(p.src), types.Null,
					types.Null, types.Null, types.Null})
			}
			return rows
		},
	}
	// pg_language: the languages pg_proc's prolang names (all built-in
	// functions are "internal").
	pgSystemTables["pg_catalog.pg_language"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "lanname", types.Text, "lanowner", types.Int8, "lanispl", types.Bool,
			"lanpltrusted", types.Bool, "lanplcallfoid", types.Int8, "laninline", types.Int8,
			"lanvalidator", types.Int8, "lanacl", types.Text),
		rows: func(*Engine) []types.Row {
			var rows []types.Row
			for _, l := range []struct {
				oid     int64
				name    string
				trusted bool
			}{{12, "internal", false}, {13, "c", false}, {14, "sql", true}} {
				rows = append(rows, types.Row{intD(l.oid), str(l.name), intD(10), types.NewBool(false),
					types.NewBool(l.trusted), intD(0), intD(0), intD(0), types.Null})
			}
			return rows
		},
	}
}
