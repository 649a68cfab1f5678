package testutil

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// EnvJDBCJar names an environment variable holding the path of the
// PostgreSQL JDBC driver jar; without it, JDBCJar looks where Debian's
// libpostgresql-jdbc-java puts it.
const EnvJDBCJar = "STREAMDB_JDBC_JAR"

// JDBCJar returns the path of the PostgreSQL JDBC driver. It fails the test
// with the install line when the driver or java is missing: CI installs both
// (.ci/run), so a missing one is a broken machine, not a reason to skip.
func JDBCJar(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatal("java not found on $PATH: apt-get install -y default-jdk-headless")
	}
	jar := os.Getenv(EnvJDBCJar)
	if jar == "" {
		jar = "/usr/share/java/postgresql.jar"
	}
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("PostgreSQL JDBC driver not found (%v): apt-get install -y libpostgresql-jdbc-java, or set $%s", err, EnvJDBCJar)
	}
	return jar
}

// RunJDBC connects with the JDBC URL and runs each statement through
// tests/testutil/jdbc/RunSQL.java (single-file source launch, so nothing is
// compiled ahead). It returns the program's output: per statement its rows
// (tab-separated columns) and "OK", or "ERROR <SQLSTATE> <message>"; a
// failed connection gives one line "CONNECT-ERROR <SQLSTATE> <message>".
func RunJDBC(t testing.TB, url string, statements ...string) string {
	t.Helper()
	jar := JDBCJar(t)
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "tests", "testutil", "jdbc", "RunSQL.java")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-cp", jar, src, url)
	cmd.Stdin = strings.NewReader(strings.Join(statements, "\n") + "\n")
	cmd.Env = append(os.Environ(), "TZ=UTC")
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.HasPrefix(string(out), "CONNECT-ERROR") {
		t.Fatalf("java RunSQL.java: %v\n%s", err, out)
	}
	return string(out)
}
