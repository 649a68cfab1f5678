package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Postgres is a real PostgreSQL server in a temporary directory, started by
// StartPostgres for differential tests.
type Postgres struct {
	// Port is the TCP port on 127.0.0.1.
	Port int
	// DataDir is the cluster directory (initdb -D).
	DataDir string
	// LogPath is the server log.
	LogPath string

	bin     string // directory of initdb, pg_ctl and postgres
	runAs   string // "postgres" when the test runs as root, else ""
	stopped bool
	// opts are the server options a Restart starts it with again.
	opts string
}

// StartPostgres initialises a fresh cluster in a temporary directory
// (trust authentication, superuser "postgres", UTF8, C collation with a
// Unicode-aware LC_CTYPE of C.utf8, as streamdb's upper and lower), starts it
// on a free port of 127.0.0.1 with fsync off and TimeZone UTC, and stops it
// in t.Cleanup. As root it runs initdb and pg_ctl as user postgres through
// runuser, since PostgreSQL refuses to run as root. If PostgreSQL is not
// installed the test fails with a hint to install it.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bin, err := findPostgresBin()
	if err != nil {
		t.Fatalf("testutil: %v", err)
	}
	pg := &Postgres{bin: bin}
	var uid, gid = -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("testutil: running as root needs the user postgres to run PostgreSQL (apt-get install -y postgresql creates it): %v", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		pg.runAs = "postgres"
	}

	// t.TempDir is not reachable by another user, so use a world-traversable
	// directory of our own.
	base, err := os.MkdirTemp("", "streamdb-pg-")
	if err != nil {
		t.Fatalf("testutil: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	pg.DataDir = filepath.Join(base, "data")
	runDir := filepath.Join(base, "run") // socket and log
	pg.LogPath = filepath.Join(runDir, "postgres.log")
	for _, d := range []string{pg.DataDir, runDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatalf("testutil: %v", err)
		}
	}
	if pg.runAs != "" {
		for _, p := range []string{base, pg.DataDir, runDir} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatalf("testutil: %v", err)
			}
		}
		for _, p := range []string{pg.DataDir, runDir} {
			if err := os.Chown(p, uid, gid); err != nil {
				t.Fatalf("testutil: %v", err)
			}
		}
		if err := os.Chmod(pg.DataDir, 0o700); err != nil {
			t.Fatalf("testutil: %v", err)
		}
	}

	if out, err := pg.command("initdb", "-D", pg.DataDir, "-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--locale=C", "--lc-ctype=C.utf8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("testutil: initdb: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("testutil: last lines of %s:\n%s", pg.LogPath, tailFile(pg.LogPath, 50))
		}
	})
	t.Cleanup(func() { pg.Stop(t) })

	for attempt := 1; ; attempt++ {
		pg.Port = FreePort(t)
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off "+
			"-c synchronous_commit=off -c full_page_writes=off -c TimeZone=UTC", pg.Port, runDir)
		out, err := pg.command("pg_ctl", "-D", pg.DataDir, "-l", pg.LogPath, "-o", opts,
			"-w", "-t", "60", "start").CombinedOutput()
		if err == nil {
			pg.opts = opts
			break
		}
		log := tailFile(pg.LogPath, 30)
		if attempt < 3 && strings.Contains(log, "already in use") {
			continue
		}
		t.Fatalf("testutil: pg_ctl start: %v\n%s\n--- log ---\n%s", err, out, log)
	}
	return pg
}

// DSN returns a URL for the postgres database as superuser postgres.
func (pg *Postgres) DSN() string {
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable&connect_timeout=10", hostPort(pg.Port))
}

// Conn opens a pgx connection, closed by t.Cleanup.
func (pg *Postgres) Conn(t testing.TB) *pgx.Conn {
	t.Helper()
	return connect(t, pg.DSN())
}

// Stop stops the server at once (pg_ctl stop -m immediate). It is called by
// t.Cleanup; calling it twice does nothing.
func (pg *Postgres) Stop(t testing.TB) {
	t.Helper()
	if pg.stopped {
		return
	}
	pg.stopped = true
	if out, err := pg.command("pg_ctl", "-D", pg.DataDir, "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
		t.Errorf("testutil: pg_ctl stop: %v\n%s", err, out)
	}
}

// command builds a command for one of the PostgreSQL programs, run as user
// postgres when the test runs as root.
func (pg *Postgres) command(prog string, args ...string) *exec.Cmd {
	path := filepath.Join(pg.bin, prog)
	var cmd *exec.Cmd
	if pg.runAs != "" {
		cmd = exec.Command(runuserPath(), append([]string{"-u", pg.runAs, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	// The postgres user may not be able to enter the current directory.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	return cmd
}

func runuserPath() string {
	if p, err := exec.LookPath("runuser"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/runuser", "/sbin/runuser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "runuser"
}

// findPostgresBin returns a directory holding initdb, pg_ctl and postgres:
// that of pg_ctl on $PATH, else the newest /usr/lib/postgresql/*/bin.
func findPostgresBin() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	versioned, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(versioned, func(i, j int) bool { return pgVersion(versioned[i]) > pgVersion(versioned[j]) })
	dirs = append(dirs, versioned...)
	for _, d := range dirs {
		if hasAll(d, "initdb", "pg_ctl", "postgres") {
			return d, nil
		}
	}
	return "", fmt.Errorf("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on $PATH " +
		"or under /usr/lib/postgresql/*/bin; install them: apt-get install -y postgresql")
}

// pgVersion extracts N from /usr/lib/postgresql/N/bin.
func pgVersion(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func hasAll(dir string, progs ...string) bool {
	for _, p := range progs {
		if st, err := os.Stat(filepath.Join(dir, p)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

// PostgresClient returns the path of a PostgreSQL client program (psql,
// pg_dump): the one on $PATH, else the one beside the server binaries
// StartPostgres uses. The test fails with a hint when there is none.
func PostgresClient(t testing.TB, prog string) string {
	t.Helper()
	if p, err := exec.LookPath(prog); err == nil {
		return p
	}
	if dir, err := findPostgresBin(); err == nil {
		if p := filepath.Join(dir, prog); hasAll(dir, prog) {
			return p
		}
	}
	t.Fatalf("testutil: %s not found on $PATH or under /usr/lib/postgresql/*/bin; install it: apt-get install -y postgresql-client", prog)
	return ""
}

// ConnectDSN opens a pgx connection to dsn (another database of a
// Postgres, say), closed by t.Cleanup.
func ConnectDSN(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	return connect(t, dsn)
}
