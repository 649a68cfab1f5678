package sql

import (
	"strings"

	"streamdb/pgcatalog"
	"streamdb/types"
)

// The PostgreSQL view of streamdb's catalog is package pgcatalog; these
// are the names sql uses of it.

const (
	// firstUserOID is PostgreSQL's FirstNormalObjectId: a relation's
	// OID is firstUserOID plus its catalog ID.
	firstUserOID = pgcatalog.FirstUserOID
)

// quoteIdent quotes a name the way PostgreSQL's quote_ident does.
func quoteIdent(name string) string { return pgcatalog.QuoteIdent(name) }

// quoteLiteral quotes s as a standard SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// quoteIdents quotes names and joins them with ", ".
func quoteIdents(names []string) string { return pgcatalog.QuoteIdents(names) }

// typname is pg_type.typname of a type.
func typname(t types.Type) string { return pgcatalog.Typname(t) }
