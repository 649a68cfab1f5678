package front

import "streamdb/sqlerr"

// Users, roles and privileges: CREATE / ALTER / DROP USER and ROLE, GRANT
// and REVOKE, in PostgreSQL's syntax (the subset streamdb keeps).

// RoleAction is what a RoleStmt does.
type RoleAction string

// The role statements.
const (
	RoleCreate RoleAction = "CREATE"
	RoleAlter  RoleAction = "ALTER"
	RoleDrop   RoleAction = "DROP"
)

// RoleStmt is CREATE {USER | ROLE} name [[WITH] option ...], ALTER {USER |
// ROLE} name [WITH] option ..., or DROP {USER | ROLE} [IF EXISTS] name
// [, ...]. The options are PASSWORD 'text' | PASSWORD NULL | ENCRYPTED
// PASSWORD 'text', SUPERUSER | NOSUPERUSER, LOGIN | NOLOGIN; nil fields
// were not given.
type RoleStmt struct {
	Action   RoleAction
	User     bool     // USER rather than ROLE (CREATE USER implies LOGIN)
	Names    []string // one for CREATE and ALTER
	IfExists bool
	// Password is the PASSWORD option's text (a password, or a SCRAM
	// verifier "SCRAM-SHA-256$..." as psql's \password sends); nil if
	// none was given. PasswordNull is PASSWORD NULL.
	Password     *string
	PasswordNull bool
	Superuser    *bool
	Login        *bool
}

// Grant is GRANT / REVOKE of table privileges, or of CREATE on the
// database:
//
//	GRANT {priv [, ...] | ALL [PRIVILEGES]} ON [TABLE] name [, ...] TO role [, ...]
//	GRANT ... ON ALL TABLES IN SCHEMA public TO role [, ...]
//	GRANT {CREATE | ALL [PRIVILEGES]} ON DATABASE name TO role [, ...]
//	REVOKE ... FROM role [, ...] [CASCADE | RESTRICT]
//
//	GRANT {USAGE | SELECT | UPDATE} [, ...] | ALL ON SEQUENCE name [, ...] TO ...
//	GRANT ... ON ALL SEQUENCES IN SCHEMA public TO ...
//
// priv is SELECT, INSERT, UPDATE or DELETE on relations; USAGE, SELECT or
// UPDATE on sequences (0LP01 for another, as in PostgreSQL). A role is a
// name, PUBLIC ("public"), CURRENT_USER or SESSION_USER (kept as those
// words).
type Grant struct {
	Revoke bool
	// Privileges are upper case; nil means ALL.
	Privileges []string
	// Database is the database of ON DATABASE; "" for relations.
	Database string
	// Objects are the relations' names (last parts of dotted names).
	Objects []string
	// AllInSchema is the schema of ON ALL TABLES (or SEQUENCES) IN
	// SCHEMA s.
	AllInSchema string
	// Sequences is set for ON SEQUENCE and ON ALL SEQUENCES.
	Sequences bool
	Roles     []string
}

// isRoleStatement reports whether toks start a statement of this file.
func isRoleStatement(toks []token) bool {
	if len(toks) == 0 {
		return false
	}
	if toks[0].isWord("grant", "revoke") {
		return true
	}
	return len(toks) > 1 && toks[0].isWord("create", "alter", "drop") && toks[1].isWord("user", "role")
}

// parseRoleStatement parses a statement isRoleStatement accepted.
func parseRoleStatement(c *cursor) (any, error) {
	first := c.next()
	if first.isWord("grant", "revoke") {
		return parseGrant(c, first.isWord("revoke"))
	}
	rs := &RoleStmt{Action: RoleAction(upper(first.val)), User: c.next().isWord("user")}
	if rs.Action == RoleDrop {
		rs.IfExists = c.words("if", "exists")
		for {
			name, err := c.name()
			if err != nil {
				return nil, err
			}
			rs.Names = append(rs.Names, name)
			if !c.op(",") {
				break
			}
		}
		return rs, c.end()
	}
	name, err := c.name()
	if err != nil {
		return nil, err
	}
	rs.Names = []string{name}
	if rs.Action == RoleAlter {
		if t := c.peek(); t.isWord("rename", "set", "reset", "in") {
			return nil, unsupported(c.src, t, "ALTER %s ... %s", kindWord(rs.User), upper(t.val))
		}
	}
	c.word("with")
	for !c.atEnd() {
		t := c.next()
		switch {
		case t.isWord("superuser"):
			rs.Superuser = ptr(true)
		case t.isWord("nosuperuser"):
			rs.Superuser = ptr(false)
		case t.isWord("login"):
			rs.Login = ptr(true)
		case t.isWord("nologin"):
			rs.Login = ptr(false)
		case t.isWord("encrypted", "password"):
			if t.isWord("encrypted") && !c.word("password") {
				return nil, c.fail()
			}
			if rs.Password != nil || rs.PasswordNull {
				return nil, errorAt(c.src, t, sqlerr.SyntaxError, "conflicting or redundant options")
			}
			switch p := c.peek(); {
			case p.kind == tkString:
				c.next()
				rs.Password = ptr(p.val)
			case p.isWord("null"):
				c.next()
				rs.PasswordNull = true
			default:
				return nil, c.fail()
			}
		case t.kind == tkWord:
			return nil, unsupported(c.src, t, "the role option %s", upper(t.val)).
				WithHint("streamdb roles take PASSWORD, SUPERUSER | NOSUPERUSER and LOGIN | NOLOGIN.")
		default:
			return nil, syntaxError(c.src, t)
		}
	}
	return rs, nil
}

func ptr[T any](v T) *T { return &v }

func kindWord(user bool) string {
	if user {
		return "USER"
	}
	return "ROLE"
}

// grantable are the table privileges streamdb keeps.
var grantable = setOf("select", "insert", "update", "delete", "truncate", "references", "trigger", "usage")

// sequencePrivileges are the privileges a sequence takes.
var sequencePrivileges = setOf("USAGE", "SELECT", "UPDATE")

// parseGrant reads GRANT / REVOKE after the keyword.
func parseGrant(c *cursor, revoke bool) (any, error) {
	g := &Grant{Revoke: revoke}
	if revoke && c.peek().isWord("grant") {
		return nil, unsupported(c.src, c.peek(), "REVOKE GRANT OPTION FOR")
	}
	if c.word("all") {
		c.word("privileges")
	} else {
		for {
			t := c.next()
			switch {
			case t.kind == tkWord && grantable[t.val]:
				g.Privileges = append(g.Privileges, upper(t.val))
			case t.isWord("create"):
				g.Privileges = append(g.Privileges, "CREATE")
			case t.kind == tkWord || t.kind == tkIdent:
				if !c.peek().isWord("on") && !c.peek().isOp(",") && !c.peek().isOp("(") {
					// GRANT role TO role: membership.
					return nil, unsupported(c.src, t, "granting roles to roles").
						WithHint("Grant privileges on tables, streams and views, or CREATE ON DATABASE.")
				}
				return nil, unsupported(c.src, t, "the privilege %s", upper(t.val)).
					WithHint("streamdb grants SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES and TRIGGER on relations, USAGE, SELECT and UPDATE on sequences and CREATE on the database.")
			default:
				return nil, syntaxError(c.src, t)
			}
			if p := c.peek(); p.isOp("(") {
				return nil, unsupported(c.src, p, "column privileges")
			}
			if !c.op(",") {
				break
			}
		}
	}
	if err := c.expectWords("on"); err != nil {
		return nil, err
	}
	switch {
	case c.word("database"):
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		g.Database = name
		for _, p := range g.Privileges {
			if p != "CREATE" {
				return nil, errorAt(c.src, c.peek(), sqlerr.InvalidGrantOperation, "invalid privilege type %s for database", p)
			}
		}
	case c.words("all", "tables", "in", "schema"):
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		g.AllInSchema = name
	case c.words("all", "sequences", "in", "schema"):
		name, err := c.name()
		if err != nil {
			return nil, err
		}
		g.AllInSchema, g.Sequences = name, true
	default:
		if t := c.peek(); t.isWord("schema", "function", "procedure", "routine", "language", "tablespace", "type", "domain", "foreign", "large") {
			return nil, unsupported(c.src, t, "privileges ON %s", upper(t.val))
		}
		if !c.word("table") {
			g.Sequences = c.word("sequence")
		}
		for {
			_, name, err := c.qualifiedName()
			if err != nil {
				return nil, err
			}
			g.Objects = append(g.Objects, name)
			if !c.op(",") {
				break
			}
		}
	}
	if g.Database == "" {
		for _, p := range g.Privileges {
			switch {
			case g.Sequences && !sequencePrivileges[p]:
				return nil, errorAt(c.src, c.peek(), sqlerr.InvalidGrantOperation, "invalid privilege type %s for sequence", p)
			case !g.Sequences && (p == "CREATE" || p == "USAGE"):
				return nil, errorAt(c.src, c.peek(), sqlerr.InvalidGrantOperation, "invalid privilege type %s for table", p)
			}
		}
	}
	dir := "to"
	if revoke {
		dir = "from"
	}
	if err := c.expectWords(dir); err != nil {
		return nil, err
	}
	for {
		c.word("group")
		t := c.peek()
		if !t.isName() && !t.isWord("current_user", "session_user") {
			return nil, c.fail()
		}
		c.next()
		g.Roles = append(g.Roles, t.val)
		if !c.op(",") {
			break
		}
	}
	switch t := c.peek(); {
	case !revoke && t.isWord("with"):
		return nil, unsupported(c.src, t, "WITH GRANT OPTION")
	case revoke && t.isWord("cascade", "restrict"):
		c.next()
	case t.isWord("granted"):
		return nil, unsupported(c.src, t, "GRANTED BY")
	}
	return g, c.end()
}
