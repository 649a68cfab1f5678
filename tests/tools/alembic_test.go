package tools

import (
	"testing"
	"time"
)

// TestSQLAlchemyAlembicLikePostgres runs testdata/alembicproj against
// streamdb and against PostgreSQL 15 and compares what it prints:
// SQLAlchemy's metadata.create_all (Integer primary keys as SERIAL,
// ForeignKey with ON DELETE CASCADE, UniqueConstraint, unique=True,
// Index, server_default), the schema as SQLAlchemy's inspector reads it
// (the UNIQUE constraints' indexes in pg_index included), Alembic's
// autogenerate comparison of the live database with the next models,
// upgrade to the migration in versions/ (after which autogenerate finds
// nothing to do), ORM session writes and reads (server defaults, a
// join with an aggregate, unique and foreign key violations, nested
// transactions, a cascading delete), downgrade, and drop_all.
func TestSQLAlchemyAlembicLikePostgres(t *testing.T) {
	runLikePostgres(t, "alembic", "alembicproj", 3*time.Minute)
}
