package tools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"streamdb/tests/testutil"
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
// a SET_NULL one, and migrate back to zero (the shop, admin and sessions
// apps: auth's reverse migrations lower varchar limits, which streamdb
// refuses).
func TestDjangoMigrateLikePostgres(t *testing.T) {
	py := python(t)
	if exec.Command(py, "-c", "import django").Run() != nil {
		t.Fatal("no Django for " + py + ": apt-get install -y python3-django")
	}
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	pg := testutil.StartPostgres(t)
	run := func(port int, user, db string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "djangoproj", "run.py"))
		cmd.Env = append(os.Environ(), "PGTZ=UTC", "PYTHONDONTWRITEBYTECODE=1",
			"PGHOST=127.0.0.1", "PGPORT="+strconv.Itoa(port), "PGUSER="+user, "PGDATABASE="+db)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("django on port %d: %v\n%s", port, err, out)
		}
		return string(out)
	}
	got, want := run(srv.Port, "streamdb", "streamdb"), run(pg.Port, "postgres", "postgres")
	if got != want {
		t.Errorf("the Django run differs\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	t.Logf("django:\n%s", got)
}
