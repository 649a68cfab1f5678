package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/catalog"
	"streamdb/sqlerr"
)

// privilegeRole is a role as privilege checks see it.
type privilegeRole struct {
	e         *Engine
	name      string
	superuser bool
}

// holdsAny reports whether the role is a superuser, owns d, or holds one
// of privs on it (d nil: whether it is a superuser).
func (r privilegeRole) holdsAny(d *catalog.Descriptor, privs ...string) bool {
	if r.superuser {
		return true
	}
	if d == nil {
		return false
	}
	if r.e.roles.Owner(d) == r.name {
		return true
	}
	for _, p := range privs {
		if r.e.roles.Granted(d, r.name, p) {
			return true
		}
	}
	return false
}

// sessionRole is the session's role for privilege checks.
func (s *session) sessionRole() privilegeRole {
	return privilegeRole{e: s.e, name: s.user, superuser: s.roleSuperuser()}
}

// privilegeRoleNamed is the role has_table_privilege's first argument of
// three names (a constant, or a function such as current_user), or the
// session's without one (arg nil).
func (s *session) privilegeRoleNamed(arg ast.ExprNode) (privilegeRole, error) {
	if arg == nil || (&userFunctions{}).userFunction(arg) != "" {
		return s.sessionRole(), nil
	}
	name, ok := constTextOperand(arg)
	if !ok {
		return privilegeRole{}, sqlerr.New(sqlerr.FeatureNotSupported, "has_table_privilege needs the role as a name in a string literal")
	}
	if name == s.user {
		return s.sessionRole(), nil
	}
	if name == BootstrapUser {
		return privilegeRole{e: s.e, name: name, superuser: true}, nil
	}
	r := s.e.roles.Role(name)
	if r == nil {
		return privilegeRole{}, sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
	}
	return privilegeRole{e: s.e, name: name, superuser: r.Superuser}, nil
}

// Holds implements rewrite.Role: by pg_class OID of each relation of the
// catalog, whether the role holds one of privs on it.
func (r privilegeRole) Holds(privs []string) map[int64]bool {
	answers := map[int64]bool{}
	for _, d := range r.e.catalogObjects() {
		if oid := relationOID(d); oid != 0 {
			answers[oid] = d.Kind == catalog.KindSystem || r.holdsAny(d, privs...)
		}
	}
	return answers
}
