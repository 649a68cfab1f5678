// Package rewrite writes what the catalog knows into a parsed statement,
// before sql binds it:
//
//   - the calls of catalog and session functions (version(),
//     current_setting('x'), obj_description(oid), pg_get_viewdef, ...)
//     and the casts to the reg* types ('pg_class'::regclass,
//     $1::regtype, oid::regtype::text) become their answers, constants
//     or CASE expressions over the objects the catalog holds when the
//     statement is prepared (funcs.go, regcast.go, ident.go, tools.go,
//     comments.go, privileges.go, column_privileges.go, sequences.go);
//   - psql's and the drivers' describe queries, which front
//     recognises, are answered whole (describe.go).
//
// It reads the engine through pgcatalog.Engine and the session through
// its Session interface, which package sql implements (the privilege
// functions ask it for the role they name and what it holds); the
// answers that need more of the session (set_config, advisory locks)
// are sql's, through Session.Call. It sits between sql
// and front and never imports sql, meta, storage, broker or node
// (tests/arch).
package rewrite
