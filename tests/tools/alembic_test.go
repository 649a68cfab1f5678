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
	py := python(t)
	if exec.Command(py, "-c", "import alembic").Run() != nil {
		t.Fatal("no Alembic for " + py + ": apt-get install -y python3-alembic")
	}
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	pg := testutil.StartPostgres(t)
	run := func(port int, user, db string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "alembicproj", "run.py"))
		cmd.Env = append(os.Environ(), "PGTZ=UTC", "PYTHONDONTWRITEBYTECODE=1",
			"PGHOST=127.0.0.1", "PGPORT="+strconv.Itoa(port), "PGUSER="+user, "PGDATABASE="+db)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sqlalchemy and alembic on port %d: %v\n%s", port, err, out)
		}
		return string(out)
	}
	got, want := run(srv.Port, "streamdb", "streamdb"), run(pg.Port, "postgres", "postgres")
	if got != want {
		t.Errorf("the SQLAlchemy and Alembic run differs\nstreamdb:\n%s\npostgres:\n%s", got, want)
	}
	t.Logf("sqlalchemy and alembic:\n%s", got)
}
