package tools

import (
	"testing"
	"time"
)

// TestDjangoMigrateLikePostgres runs the Django project in
// testdata/djangoproj against streamdb and against PostgreSQL 15 and
// compares what it prints: migrate (Django's admin, auth, contenttypes
// and sessions apps, and the shop app's two migrations: AutoField and
// BigAutoField keys, ForeignKey, ManyToMany, unique_together,
// UniqueConstraint, CheckConstraint, indexes with varchar_pattern_ops,
// JSONField, defaults, widened varchar columns; then a field added, a
// ForeignKey field added (ADD COLUMN ... REFERENCES ... DEFERRABLE, then
// SET CONSTRAINTS name IMMEDIATE), one renamed, one removed, an index
// added and one dropped), the catalog as Django's introspection reads
// it, ORM writes and reads (select_related,
// prefetch_related, aggregate, annotate grouped by the primary key,
// ManyToMany add through INSERT ... ON CONFLICT DO NOTHING), constraint
// violations, check_constraints (SET CONSTRAINTS ALL IMMEDIATE),
// transaction.atomic with a rollback and a savepoint, a cascading delete,
// a SET_NULL one, then migrate every app back to zero (auth's reverse
// migrations lower varchar limits) and forward again.
func TestDjangoMigrateLikePostgres(t *testing.T) {
	runLikePostgres(t, "django", "djangoproj", 4*time.Minute)
}
