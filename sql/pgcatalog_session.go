package sql

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/config"
	"streamdb/pgcatalog"
	"streamdb/pgcatalog/rewrite"
)

// substituteCatalogFunctions rewrites the catalog function calls and reg*
// casts of a query or DML statement in place (rewrite.Statement); other
// statements are left as they are. effects are the changes the statement
// makes to the session (set_config, pg_advisory_xact_lock), to run when
// it runs.
func (s *session) substituteCatalogFunctions(node any) (effects []func(context.Context) error, err error) {
	v := &catalogFuncs{s: s}
	err = rewrite.Statement(node, v)
	return v.effects, err
}

func init() {
	// Call's functions that pgcatalog does not list (it lists those
	// whose answers are the catalog's).
	rewrite.CatalogFuncs["pg_advisory_xact_lock"] = true
}

// catalogFuncs is session s as package rewrite asks it while it rewrites
// one statement (rewrite.Session).
type catalogFuncs struct {
	s *session
	// effects run when the statement runs, before it (set_config).
	effects []func(context.Context) error
}

// Catalog implements rewrite.Session.
func (v *catalogFuncs) Catalog() pgcatalog.Engine { return catalogEngine{v.s.e} }

// DatabaseName implements rewrite.Session.
func (v *catalogFuncs) DatabaseName() string { return v.s.databaseName() }

// Setting implements rewrite.Session.
func (v *catalogFuncs) Setting(key string) (string, bool) { return v.s.settingValue(key) }

// BackendPID implements rewrite.Session.
func (v *catalogFuncs) BackendPID() int64 { return v.s.backendPID() }

// PrivilegeRole implements rewrite.Session (privilegeRoleNamed).
func (v *catalogFuncs) PrivilegeRole(arg ast.ExprNode) (rewrite.Role, error) {
	return v.s.privilegeRoleNamed(arg)
}

// Call implements rewrite.Session: the functions answered from the
// session's settings and the engine's locks.
func (v *catalogFuncs) Call(name string, args []ast.ExprNode) (out ast.ExprNode, ok bool, err error) {
	switch name {
	case "pg_advisory_xact_lock":
		out, err = v.advisoryXactLock(args)
	case "set_config":
		out, err = v.setConfigCall(args)
	default:
		return nil, false, nil
	}
	return out, true, err
}

// databaseName is current_database(): the database the client named.
func (s *session) databaseName() string {
	if s.database != "" {
		return s.database
	}
	if s.user != "" {
		return s.user
	}
	return "streamdb"
}

// settingValue is current_setting(key): a session parameter, or a server
// setting.
func (s *session) settingValue(key string) (string, bool) {
	if v, ok := s.settings[key]; ok {
		return v, true
	}
	if v, ok := defaultSessionSettings[key]; ok {
		return v, true
	}
	if config.Known(key) {
		return s.e.setting(key), true
	}
	switch key {
	case "server_version_num":
		return "150000", true
	case "is_superuser":
		if s.e.roles.Role(s.user) == nil || s.e.roles.Role(s.user).Superuser {
			return "on", true
		}
		return "off", true
	case "session_authorization":
		return s.user, true
	case "lc_collate", "lc_ctype":
		return "C", true
	case "default_transaction_isolation":
		return "serializable", true
	case "default_transaction_read_only", "transaction_read_only":
		return "off", true
	}
	if knownSessionParam(key) {
		return "", true
	}
	return "", false
}
