package pgcatalog

import "streamdb/types"

// pg_roles and pg_user: the roles (Engine.Roles) and PostgreSQL's
// predefined role pg_database_owner.

func init() {
	register("pg_catalog.pg_roles", cols("oid", types.Int8, "rolname", types.Text, "rolsuper", types.Bool, "rolinherit", types.Bool,
		"rolcreaterole", types.Bool, "rolcreatedb", types.Bool, "rolcanlogin", types.Bool,
		"rolreplication", types.Bool, "rolconnlimit", types.Int4, "rolpassword", types.Text,
		"rolvaliduntil", types.Timestamptz, "rolbypassrls", types.Bool, "rolconfig", types.Text),
		func(e Engine) []types.Row {
			var out []types.Row
			for _, r := range e.Roles() {
				out = append(out, types.Row{intD(r.OID), str(r.Name), b(r.Superuser), b(true),
					b(r.Superuser), b(r.Superuser), b(r.Login), b(false), types.NewInt(-1),
					str("********"), types.Null, b(r.Superuser), types.Null})
			}
			// PostgreSQL's predefined role that owns schema public
			// (pg_namespace.nspowner), which tools resolve by OID.
			out = append(out, types.Row{intD(DatabaseOwnerOID), str("pg_database_owner"), b(false), b(true),
				b(false), b(false), b(false), b(false), types.NewInt(-1),
				str("********"), types.Null, b(false), types.Null})
			return out
		})
	register("pg_catalog.pg_user", cols("usename", types.Text, "usesysid", types.Int8, "usecreatedb", types.Bool, "usesuper", types.Bool,
		"userepl", types.Bool, "usebypassrls", types.Bool, "passwd", types.Text,
		"valuntil", types.Timestamptz, "useconfig", types.Text),
		func(e Engine) []types.Row {
			var out []types.Row
			for _, r := range e.Roles() {
				if !r.Login {
					continue
				}
				out = append(out, types.Row{str(r.Name), intD(r.OID), b(r.Superuser), b(r.Superuser),
					b(false), b(r.Superuser), str("********"), types.Null, types.Null})
			}
			return out
		})
}
