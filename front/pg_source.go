package front

import (
	"strings"

	"streamdb/sqlerr"
)

// CreatePGSource is CREATE SOURCE name FROM POSTGRES (CONNECTION 'dsn',
// PUBLICATION 'pub') FOR TABLES (schema.table [AS name], ...) | FOR ALL
// TABLES: tables of a PostgreSQL database mirrored through logical
// replication. CONNECTION SECRET name takes the connection string from a
// secret, and PASSWORD SECRET name the password of CONNECTION's. SSL
// CERTIFICATE AUTHORITY SECRET, SSL CERTIFICATE SECRET and SSL KEY SECRET
// name secrets that hold PEM text: the CA that signs the source's server
// certificate, and the client certificate and key the source may ask for.
type CreatePGSource struct {
	Name        string
	IfNotExists bool
	Connection  string
	Publication string
	// ConnectionSecret and PasswordSecret name secrets (CREATE SECRET).
	ConnectionSecret string
	PasswordSecret   string
	SSLCASecret      string
	SSLCertSecret    string
	SSLKeySecret     string
	// Tables are the tables to mirror; empty with AllTables.
	Tables    []PGSourceTable
	AllTables bool
}

// PGSourceTable is one table of FOR TABLES: the source's schema (""
// means public) and name, and the streamdb table's name ("" means the
// source table's name).
type PGSourceTable struct {
	Schema, Name, As string
}

// isPGSource reports whether the cursor, at SOURCE after CREATE, is at
// a replication source (SOURCE [IF NOT EXISTS] name FROM) rather than a
// stream declaration.
func isPGSource(c *cursor) bool {
	k := 1
	if c.peekAt(1).isWord("if") && c.peekAt(2).isWord("not") && c.peekAt(3).isWord("exists") {
		k = 4
	}
	if !c.peekAt(k).isName() {
		return false
	}
	return c.peekAt(k + 1).isWord("from")
}

// parseCreatePGSource reads what follows CREATE SOURCE.
func parseCreatePGSource(c *cursor) (any, error) {
	n := &CreatePGSource{IfNotExists: c.words("if", "not", "exists")}
	var err error
	if n.Name, err = c.name(); err != nil {
		return nil, err
	}
	if err := c.expectWords("from"); err != nil {
		return nil, err
	}
	if t := c.peek(); !c.word("postgres", "postgresql") {
		if t.kind == tkWord {
			return nil, unsupported(c.src, t, "CREATE SOURCE ... FROM %s", upper(t.val))
		}
		return nil, c.fail()
	}
	if err := c.expectOp("("); err != nil {
		return nil, err
	}
	for {
		at := c.peek()
		key, err := c.name()
		if err != nil {
			return nil, err
		}
		c.op("=")
		key = strings.ToLower(key)
		if key == "ssl" {
			if err := parseSSLOption(c, n); err != nil {
				return nil, err
			}
		} else if (key == "connection" || key == "password") && c.word("secret") {
			name, err := secretName(c)
			if err != nil {
				return nil, err
			}
			if key == "connection" {
				n.ConnectionSecret = name
			} else {
				n.PasswordSecret = name
			}
		} else {
			val, err := optionValue(c)
			if err != nil {
				return nil, err
			}
			switch key {
			case "connection":
				n.Connection = val
			case "publication":
				n.Publication = val
			case "password":
				return nil, errorAt(c.src, at, sqlerr.InvalidParameterValue, "a source's PASSWORD must name a secret").
					WithHint("Keep the password in a secret (CREATE SECRET name AS '...') and write PASSWORD SECRET name.")
			default:
				return nil, errorAt(c.src, at, sqlerr.InvalidParameterValue, "unrecognized source option %q; a PostgreSQL source takes CONNECTION, PASSWORD SECRET, SSL CERTIFICATE AUTHORITY SECRET, SSL CERTIFICATE SECRET, SSL KEY SECRET and PUBLICATION", key)
			}
		}
		if c.op(")") {
			break
		}
		if err := c.expectOp(","); err != nil {
			return nil, err
		}
	}
	switch {
	case n.Connection == "" && n.ConnectionSecret == "" || n.Publication == "":
		return nil, sqlerr.New(sqlerr.SyntaxError, "a PostgreSQL source needs CONNECTION 'connection string' (or CONNECTION SECRET name) and PUBLICATION 'name'")
	case n.Connection != "" && n.ConnectionSecret != "":
		return nil, sqlerr.New(sqlerr.SyntaxError, "a PostgreSQL source takes CONNECTION 'connection string' or CONNECTION SECRET name, not both")
	case n.PasswordSecret != "" && n.Connection == "":
		return nil, sqlerr.New(sqlerr.SyntaxError, "PASSWORD SECRET goes with CONNECTION 'connection string'").
			WithHint("Put the password in the connection string CONNECTION SECRET names, or give CONNECTION 'host=... user=...' with PASSWORD SECRET name.")
	case (n.SSLCertSecret == "") != (n.SSLKeySecret == ""):
		return nil, sqlerr.New(sqlerr.SyntaxError, "SSL CERTIFICATE SECRET and SSL KEY SECRET go together").
			WithHint("A client certificate is presented with its private key: give both, each naming a secret that holds its PEM text.")
	}
	if err := c.expectWords("for"); err != nil {
		return nil, err
	}
	if c.words("all", "tables") {
		n.AllTables = true
		return n, c.end()
	}
	if err := c.expectWords("tables"); err != nil {
		return nil, err
	}
	if err := c.expectOp("("); err != nil {
		return nil, err
	}
	for {
		var t PGSourceTable
		if t.Schema, t.Name, err = c.qualifiedName(); err != nil {
			return nil, err
		}
		if c.word("as") {
			if t.As, err = c.name(); err != nil {
				return nil, err
			}
		}
		n.Tables = append(n.Tables, t)
		if c.op(")") {
			return n, c.end()
		}
		if err := c.expectOp(","); err != nil {
			return nil, err
		}
	}
}

// parseSSLOption reads what follows SSL in a source's options:
// CERTIFICATE AUTHORITY, CERTIFICATE or KEY, an optional =, and SECRET
// name. The PEM text lives only in secrets, never in the statement.
func parseSSLOption(c *cursor, n *CreatePGSource) error {
	at := c.peek()
	var option string
	var target *string
	switch {
	case c.words("certificate", "authority"):
		option, target = "SSL CERTIFICATE AUTHORITY", &n.SSLCASecret
	case c.word("certificate"):
		option, target = "SSL CERTIFICATE", &n.SSLCertSecret
	case c.word("key"):
		option, target = "SSL KEY", &n.SSLKeySecret
	default:
		return errorAt(c.src, at, sqlerr.SyntaxError, "SSL must be followed by CERTIFICATE AUTHORITY, CERTIFICATE or KEY").
			WithHint("Write SSL CERTIFICATE AUTHORITY SECRET ca, SSL CERTIFICATE SECRET cert or SSL KEY SECRET key; TLS itself is the connection string's sslmode.")
	}
	c.op("=")
	if !c.word("secret") {
		return errorAt(c.src, c.peek(), sqlerr.InvalidParameterValue, "a source's %s must name a secret", option).
			WithHint("Keep the PEM text in a secret (CREATE SECRET name AS '-----BEGIN ...') and write %s SECRET name.", option)
	}
	if *target != "" {
		return errorAt(c.src, at, sqlerr.SyntaxError, "%s is given twice", option)
	}
	name, err := secretName(c)
	if err != nil {
		return err
	}
	*target = name
	return nil
}
