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

// TestDjangoInspectdbLikePostgres: Django's inspectdb writes the same
// models for streamdb's tables as for PostgreSQL 15's: column types with
// their sizes (varchar(20), numeric(12,3)), nullability, the primary key
// and a composite one (unique_together). Its introspection queries read
// pg_constraint.conkey and pg_index.indkey as int2 arrays.
func TestDjangoInspectdbLikePostgres(t *testing.T) {
	inspectdbLikePostgres(t, []string{
		"CREATE TABLE accounts (id int PRIMARY KEY, name varchar(20), balance numeric(12,3) NOT NULL, opened timestamptz, tags text[])",
		"CREATE TABLE pairs (a int, b text NOT NULL, c bigint, PRIMARY KEY (c, a))",
	}, "accounts", "pairs")
}

// TestDjangoInspectdbConstraintsLikePostgres: Django's inspectdb reads
// UNIQUE columns (unique=True) and foreign keys (ForeignKey to the
// referenced model) from streamdb's catalogs as from PostgreSQL 15's.
func TestDjangoInspectdbConstraintsLikePostgres(t *testing.T) {
	inspectdbLikePostgres(t, []string{
		"CREATE TABLE authors (id int PRIMARY KEY, email text UNIQUE, age int CHECK (age >= 0))",
		"CREATE TABLE books (id int PRIMARY KEY, author_id int NOT NULL REFERENCES authors, title text, UNIQUE (author_id, title))",
	}, "authors", "books")
}

// inspectdbLikePostgres runs schema in streamdb and in PostgreSQL 15 and
// compares the models Django's inspectdb writes for tables.
func inspectdbLikePostgres(t *testing.T, schema []string, tables ...string) {
	py := python(t)
	if exec.Command(py, "-c", "import django").Run() != nil {
		t.Fatal("no Django for " + py + ": apt-get install -y python3-django")
	}
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	pg := testutil.StartPostgres(t)
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
		args := append([]string{filepath.Join("testdata", "django_inspectdb.py"), "127.0.0.1", strconv.Itoa(port), user, db}, tables...)
		cmd := exec.CommandContext(ctx, py, args...)
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
