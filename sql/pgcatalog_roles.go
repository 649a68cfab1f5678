package sql

import (
	"sort"
	"strings"

	"streamdb/catalog"
	"streamdb/types"
)

// Role rows of pg_catalog: pg_roles and pg_user as system tables, and the
// answer to psql's \du. The bootstrap superuser has PostgreSQL's oid 10.

// pgDatabaseOwnerOID is the OID of PostgreSQL's role pg_database_owner.
const pgDatabaseOwnerOID = 6171

// roleRow is one role as the catalogs show it.
type roleRow struct {
	oid                  int64
	name                 string
	super, login, passwd bool
}

// roleRows lists the bootstrap superuser and every created role, by name.
func (e *Engine) roleRows() []roleRow {
	rows := []roleRow{{oid: 10, name: BootstrapUser, super: true, login: true, passwd: true}}
	for name, r := range e.roles.List() {
		rows = append(rows, roleRow{oid: r.OID, name: name, super: r.Superuser, login: r.Login, passwd: r.SCRAM != ""})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	return rows
}

func init() {
	boolD := types.NewBool
	pgSystemTables["pg_catalog.pg_roles"] = pgSystemTableDef{
		cols: cols("oid", types.Int8, "rolname", types.Text, "rolsuper", types.Bool, "rolinherit", types.Bool,
			"rolcreaterole", types.Bool, "rolcreatedb", types.Bool, "rolcanlogin", types.Bool,
			"rolreplication", types.Bool, "rolconnlimit", types.Int4, "rolpassword", types.Text,
			"rolvaliduntil", types.Timestamptz, "rolbypassrls", types.Bool, "rolconfig", types.Text),
		rows: func(e *Engine) []types.Row {
			var out []types.Row
			for _, r := range e.roleRows() {
				out = append(out, types.Row{intD(r.oid), str(r.name), boolD(r.super), boolD(true),
					boolD(r.super), boolD(r.super), boolD(r.login), boolD(false), types.NewInt(-1),
					str("********"), types.Null, boolD(r.super), types.Null})
			}
			// PostgreSQL's predefined role that owns schema public
			// (pg_namespace.nspowner), which tools resolve by OID.
			out = append(out, types.Row{intD(pgDatabaseOwnerOID), str("pg_database_owner"), boolD(false), boolD(true),
				boolD(false), boolD(false), boolD(false), boolD(false), types.NewInt(-1),
				str("********"), types.Null, boolD(false), types.Null})
			return out
		},
	}
	pgSystemTables["pg_catalog.pg_user"] = pgSystemTableDef{
		cols: cols("usename", types.Text, "usesysid", types.Int8, "usecreatedb", types.Bool, "usesuper", types.Bool,
			"userepl", types.Bool, "usebypassrls", types.Bool, "passwd", types.Text,
			"valuntil", types.Timestamptz, "useconfig", types.Text),
		rows: func(e *Engine) []types.Row {
			var out []types.Row
			for _, r := range e.roleRows() {
				if !r.login {
					continue
				}
				out = append(out, types.Row{str(r.name), intD(r.oid), boolD(r.super), boolD(r.super),
					boolD(false), boolD(r.super), str("********"), types.Null, types.Null})
			}
			return out
		},
	}
}

// roles answers psql's \du: one row per role matching the pattern, with
// the columns psql turns into "Attributes".
func (a *catalogAnswer) roles() []fieldRow {
	var out []fieldRow
	for _, r := range a.s.e.roleRows() {
		if !matches(a.name, r.name) || strings.HasPrefix(r.name, "pg_") {
			continue
		}
		out = append(out, fieldRow{
			"rolname": str(r.name), "rolsuper": boolText(r.super), "rolinherit": boolText(true),
			"rolcreaterole": boolText(r.super), "rolcreatedb": boolText(r.super), "rolcanlogin": boolText(r.login),
			"rolconnlimit": str("-1"), "memberof": str("{}"), "rolreplication": boolText(false),
			"rolbypassrls": boolText(r.super),
		})
	}
	return out
}

// relationOwner is the owner \d shows: the created role that owns d, or,
// for objects of the bootstrap superuser and of trusted sessions, the
// connected user (as before roles existed).
func (a *catalogAnswer) relationOwner(d *catalog.Descriptor) string {
	if o := a.s.e.roles.Owner(d); o != BootstrapUser {
		return o
	}
	return a.owner()
}
