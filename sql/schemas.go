package sql

import (
	"context"
	"fmt"
	"strings"

	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
)

// CREATE SCHEMA and DROP SCHEMA. streamdb keeps every user object in the
// schema public (names are one-part in the catalog, the JetStream
// subjects and the privileges). The forms tools and migrations emit for
// public are accepted as PostgreSQL answers them; any other schema is
// refused with 0A000 rather than half-made.

// systemSchemas are the schemas that always exist.
var systemSchemas = map[string]bool{"public": true, "pg_catalog": true, "information_schema": true}

// createSchema runs CREATE SCHEMA [IF NOT EXISTS] name.
func createSchema(ctx context.Context, n *front.CreateSchema) (string, error) {
	const tag = "CREATE SCHEMA"
	if strings.HasPrefix(n.Name, "pg_") {
		return "", withDetail(sqlerr.New(sqlerr.ReservedName, "unacceptable schema name %q", n.Name),
			"The prefix \"pg_\" is reserved for system schemas.")
	}
	if systemSchemas[n.Name] {
		if n.IfNotExists {
			pgwire.Notice(ctx, fmt.Sprintf("schema %q already exists, skipping", n.Name), "")
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.DuplicateSchema, "schema %q already exists", n.Name)
	}
	return "", sqlerr.New(sqlerr.FeatureNotSupported, "CREATE SCHEMA %s is not supported: streamdb has the schema public only", n.Name).
		WithHint("Create the objects in public (leave the schema out of their names), and prefix their names if they need a namespace.")
}

// dropSchema runs DROP SCHEMA [IF EXISTS] names.
func dropSchema(ctx context.Context, n *front.DropSchema) (string, error) {
	const tag = "DROP SCHEMA"
	for _, name := range n.Names {
		if systemSchemas[name] {
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "DROP SCHEMA %s is not supported: streamdb keeps every object in public", name).
				WithHint("Drop the objects themselves with DROP TABLE, DROP STREAM, DROP VIEW or DROP MATERIALIZED VIEW.")
		}
	}
	for _, name := range n.Names {
		if !n.IfExists {
			return "", sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", name)
		}
		pgwire.Notice(ctx, fmt.Sprintf("schema %q does not exist, skipping", name), "")
	}
	return tag, nil
}
