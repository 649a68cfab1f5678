package recovery

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestSecretsEncryptedAtRest checks that CREATE SECRET values are stored
// encrypted: no file under the data directory (state, checkpoints,
// savepoints, NATS) holds a secret's plaintext after CREATE SECRET, ALTER
// SECRET, checkpoints and a savepoint. The key is in the file
// --secret-key-file names; a source whose password is a secret still
// connects after ROLLBACK TO SAVEPOINT and after a kill -9 and restart,
// and a server given another key says which secret it cannot read and
// what to do.
func TestSecretsEncryptedAtRest(t *testing.T) {
	const password = "pw-At-Rest-Plain-5d2c"
	const otherValue = "other-Secret-Value-19ab"
	pg, keyValue := testutil.StartPostgresPasswordSource(t, password)
	src := pg.Conn(t)

	newKey := func() []byte {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			t.Fatal(err)
		}
		return []byte(hex.EncodeToString(k) + "\n")
	}
	keyFile := filepath.Join(t.TempDir(), "streamdb.key")
	key := newKey()
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, testutil.ServerOptions{Args: []string{"--secret-key-file", keyFile}})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE SECRET pgpass AS 'first-Value-Replaced-77e0'",
		fmt.Sprintf("ALTER SECRET pgpass AS '%s'", password),
		fmt.Sprintf("CREATE SECRET other AS '%s'", otherValue),
		fmt.Sprintf("CREATE SOURCE shop FROM POSTGRES (CONNECTION '%s', PASSWORD SECRET pgpass, PUBLICATION 'shop') FOR TABLES (public.items)", keyValue))

	next := 100
	follows := func(when string) {
		t.Helper()
		testutil.MustExec(t, src, fmt.Sprintf("INSERT INTO items VALUES (%d, 'after %s')", next, when))
		next++
		cols, want := mustQuery(t, src, "SELECT * FROM items ORDER BY id")
		testutil.Poll(t, 3*time.Minute, when+": the mirror to equal the source", func() error {
			_, got, err := queryText(conn, time.Minute, "SELECT * FROM items ORDER BY id")
			if err != nil {
				return err
			}
			if d := diffRows(cols, want, got, nil); d != "" {
				var status string
				_ = conn.QueryRow(context.Background(), "SELECT status FROM streamdb_sources").Scan(&status)
				return fmt.Errorf("%d rows, source %d (source status %q): %s", len(got), len(want), status, d)
			}
			return nil
		})
	}
	// noPlaintext greps every file under the data directory for the
	// secrets' values.
	noPlaintext := func(when string) {
		t.Helper()
		files := 0
		err := filepath.WalkDir(srv.DataDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil // removed while walking (a compaction, an old checkpoint)
				}
				return err
			}
			if d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(path)
			if os.IsNotExist(err) {
				return nil
			}
			if err != nil {
				return err
			}
			files++
			for _, v := range []string{password, otherValue, "first-Value-Replaced-77e0"} {
				if bytes.Contains(data, []byte(v)) {
					t.Errorf("%s: %s holds a secret's value in plain text", when, path)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if files == 0 {
			t.Fatalf("%s: no files under %s", when, srv.DataDir)
		}
	}
	follows("CREATE SOURCE")
	takeCheckpoint(t, conn)
	testutil.MustExec(t, conn, "SAVEPOINT secrets_set", "CREATE SECRET later AS 'later-Value-0c3'")
	takeCheckpoint(t, conn)
	if _, err := os.Stat(filepath.Join(srv.DataDir, "savepoints", "secrets_set", "state")); err != nil {
		t.Fatalf("the savepoint's state: %v", err)
	}
	noPlaintext("after checkpoints and a savepoint")

	// ROLLBACK TO restores the state the savepoint holds: the source
	// reconnects with the secret read back from it.
	testutil.MustExec(t, conn, "ALTER SECRET pgpass AS 'wrong-After-Savepoint'", "ROLLBACK TO SAVEPOINT secrets_set")
	conn = srv.Conn(t)
	if err := testutil.ExecSimple(conn, time.Minute, "DROP SECRET later"); testutil.SQLState(err) != "42704" {
		t.Errorf("DROP SECRET of a secret created after the savepoint rolled back to: %v, want 42704", err)
	}
	follows("ROLLBACK TO SAVEPOINT")

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	follows("kill -9 and restart")
	noPlaintext("after the restart")

	// Another key: the source cannot read its password and says why.
	if err := os.WriteFile(keyFile, newKey(), 0o600); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.Poll(t, 2*time.Minute, "the source to report the key it cannot read its secret with", func() error {
		status := testutil.Scalar(t, conn, "SELECT status FROM streamdb_sources")
		if !strings.Contains(status, "secret pgpass was encrypted with another key") {
			return fmt.Errorf("status %q", status)
		}
		return nil
	})
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	follows("a restart with the right key again")
}
