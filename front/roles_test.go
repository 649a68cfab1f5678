package front

import (
	"reflect"
	"testing"

	"streamdb/sqlerr"
)

func TestParseRoleStatements(t *testing.T) {
	cases := []struct {
		sql  string
		want any
	}{
		{"CREATE USER alice WITH PASSWORD 'pw' SUPERUSER", &RoleStmt{Action: RoleCreate, User: true, Names: []string{"alice"}, Password: ptr("pw"), Superuser: ptr(true)}},
		{"create role r nologin", &RoleStmt{Action: RoleCreate, Names: []string{"r"}, Login: ptr(false)}},
		{`ALTER USER "Bob" PASSWORD 'SCRAM-SHA-256$4096:c2FsdA==$a:b'`, &RoleStmt{Action: RoleAlter, User: true, Names: []string{"Bob"}, Password: ptr("SCRAM-SHA-256$4096:c2FsdA==$a:b")}},
		{"ALTER ROLE r WITH PASSWORD NULL NOSUPERUSER LOGIN", &RoleStmt{Action: RoleAlter, Names: []string{"r"}, PasswordNull: true, Superuser: ptr(false), Login: ptr(true)}},
		{"DROP USER IF EXISTS a, b", &RoleStmt{Action: RoleDrop, User: true, Names: []string{"a", "b"}, IfExists: true}},
		{"GRANT SELECT, INSERT ON TABLE t, v TO alice, PUBLIC", &Grant{Privileges: []string{"SELECT", "INSERT"}, Objects: []string{"t", "v"}, Roles: []string{"alice", "public"}}},
		{"GRANT ALL PRIVILEGES ON public.t TO bob", &Grant{Objects: []string{"t"}, Roles: []string{"bob"}}},
		{"REVOKE delete ON t FROM bob CASCADE", &Grant{Revoke: true, Privileges: []string{"DELETE"}, Objects: []string{"t"}, Roles: []string{"bob"}}},
		{"GRANT CREATE ON DATABASE streamdb TO bob", &Grant{Privileges: []string{"CREATE"}, Database: "streamdb", Roles: []string{"bob"}}},
		{"GRANT SELECT ON ALL TABLES IN SCHEMA public TO current_user", &Grant{Privileges: []string{"SELECT"}, AllInSchema: "public", Roles: []string{"current_user"}}},
	}
	for _, c := range cases {
		st, err := Parse(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if !reflect.DeepEqual(st.Node, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.sql, st.Node, c.want)
		}
	}
	for sql, code := range map[string]string{
		"CREATE USER a CREATEDB":                   "0A000",
		"GRANT MAINTAIN ON t TO a":                 "0A000",
		"GRANT SELECT ON t TO a WITH GRANT OPTION": "0A000",
		"GRANT admins TO a":                        "0A000",
		"GRANT SELECT (x) ON t TO a":               "0A000",
		"GRANT INSERT ON DATABASE d TO a":          "0LP01",
		"GRANT CREATE ON t TO a":                   "0LP01",
		"GRANT SELECT ON t":                        "42601",
		"CREATE USER a PASSWORD 'x' PASSWORD 'y'":  "42601",
	} {
		_, err := Parse(sql)
		if codeOf(err) != code {
			t.Errorf("%s: got %v (%s), want %s", sql, err, codeOf(err), code)
		}
	}
}

func codeOf(err error) string {
	if e, ok := err.(*sqlerr.Error); ok {
		return e.Code
	}
	return ""
}
