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

// TestDjangoInspectdbConstraintsLikePostgres: Django's inspectdb reads
// UNIQUE columns (unique=True) and foreign keys (ForeignKey to the
// referenced model) from streamdb's catalogs as from PostgreSQL 15's.
func TestDjangoInspectdbConstraintsLikePostgres(t *testing.T) {
	py := python(t)
	if exec.Command(py, "-c", "import django").Run() != nil {
		t.Fatal("no Django for " + py + ": apt-get install -y python3-django")
	}
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	pg := testutil.StartPostgres(t)
	schema := []string{
		"CREATE TABLE authors (id int PRIMARY KEY, email text UNIQUE, age int CHECK (age >= 0))",
		"CREATE TABLE books (id int PRIMARY KEY, author_id int NOT NULL REFERENCES authors, title text, UNIQUE (author_id, title))",
	}
	for _, sql := range schema {
		if _, err := srv.Conn(t).Exec(context.Background(), sql); err != nil {
			t.Fatalf("streamdb: %s: %v", sql, err)
		}
		if _, err := pg.Conn(t).Exec(context.Background(), sql); err != nil {
			t.Fatalf("postgres: %s: %v", sql, err)
		}
	}
	inspect := func(port int, user, db string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "django_inspectdb.py"),
			"127.0.0.1", strconv.Itoa(port), user, db, "authors", "books")
		cmd.Env = append(os.Environ(), "PGTZ=UTC", "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("inspectdb: %v\n%s", err, out)
		}
		return string(out)
	}
	got, want := inspect(srv.Port, "streamdb", "streamdb"), inspect(pg.Port, "postgres", "postgres")
	if got != want {
		t.Errorf("inspectdb differs\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
}
