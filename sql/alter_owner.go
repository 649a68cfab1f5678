package sql

import (
	"context"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/sqlerr"
)

// ALTER {TABLE | VIEW | MATERIALIZED VIEW | SEQUENCE | STREAM} name
// OWNER TO role: the object's owner in the role store, which decides who
// may change or drop it and what the catalogs show. pg_dump writes one
// after every object; restoring a dump as its owner changes nothing.
// The checks are PostgreSQL's: the role exists (42704), the session's
// user owns the object or is a superuser (42501), and a non-superuser
// can only give the object to itself.
func (s *session) alterOwner(_ context.Context, n *front.AlterOwner) (string, error) {
	tag := "ALTER " + n.Kind
	name := n.Name
	if n.Schema != "" && n.Schema != "public" {
		name = n.Schema + "." + n.Name
	}
	d, ok := s.e.lookup(name)
	if !ok {
		if n.IfExists {
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", name)
	}
	want := map[string][]catalog.ObjectKind{
		"TABLE":             {catalog.KindTable, catalog.KindStream, catalog.KindView, catalog.KindUnpopulatedView, catalog.KindPlainView, catalog.KindSequence},
		"VIEW":              {catalog.KindPlainView},
		"MATERIALIZED VIEW": {catalog.KindView, catalog.KindUnpopulatedView},
		"SEQUENCE":          {catalog.KindSequence},
		"STREAM":            {catalog.KindStream},
	}[n.Kind]
	kindOK := false
	for _, k := range want {
		kindOK = kindOK || d.Kind == k
	}
	if !kindOK {
		return "", sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a %s", d.Name, map[string]string{
			"TABLE": "table", "VIEW": "view", "MATERIALIZED VIEW": "materialized view", "SEQUENCE": "sequence", "STREAM": "stream",
		}[n.Kind]).WithHint("Use ALTER %s ... OWNER TO.", kindStatementWord(d))
	}
	role := n.Role
	switch role {
	case "CURRENT_USER", "SESSION_USER", "CURRENT_ROLE":
		role = s.user
	}
	if !s.e.roles.Exists(role) {
		return "", sqlerr.New(sqlerr.UndefinedObject, "role \"%s\" does not exist", role)
	}
	if !s.roleSuperuser() {
		if s.e.roles.Owner(d) != s.user {
			return "", sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of %s %s", relKindWord(d), d.Name)
		}
		if role != s.user {
			return "", sqlerr.New(sqlerr.InsufficientPrivilege, "must be able to SET ROLE \"%s\"", role)
		}
	}
	if err := s.e.roles.ChangeOwner(d, role); err != nil {
		return "", err
	}
	// A table's serial and identity sequences go with it, as in
	// PostgreSQL.
	for _, q := range s.e.ownedSequences(d) {
		if err := s.e.roles.ChangeOwner(q, role); err != nil {
			return "", err
		}
	}
	return tag, nil
}

// kindStatementWord is the word ALTER takes for d's kind.
func kindStatementWord(d *catalog.Descriptor) string {
	switch d.Kind {
	case catalog.KindView, catalog.KindUnpopulatedView:
		return "MATERIALIZED VIEW"
	case catalog.KindPlainView:
		return "VIEW"
	case catalog.KindSequence:
		return "SEQUENCE"
	case catalog.KindStream:
		return "STREAM"
	}
	return "TABLE"
}
