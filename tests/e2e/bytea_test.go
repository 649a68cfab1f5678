package e2e

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestByteaDriver: bytea through pgx's extended protocol (binary
// parameters and results, OID 17) keeps every byte, NUL and bytes that are
// not UTF-8 included, in a table and through a stream, whose JSON events
// carry the value's hex text; a view with a bytea constant reads the same
// after a restart (its plan record keeps the bytes).
func TestByteaDriver(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		`CREATE TABLE blobs (id INT PRIMARY KEY, b BYTEA)`,
		`CREATE STREAM bev (k INT, b BYTEA) WITH (subject = 'bytea.events')`,
		`CREATE MATERIALIZED VIEW btagged AS SELECT k, b || '\x00ff'::bytea AS b2 FROM bev`)
	ctx := testutil.Context(t, 60*time.Second)
	raw := []byte{0, 1, 0xfe, 0xff, 'a', '\\', 0x80}

	for i, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		id := int32(i + 1)
		if _, err := conn.Exec(ctx, `INSERT INTO blobs VALUES ($1, $2)`, mode, id, raw); err != nil {
			t.Fatalf("mode %v: INSERT: %v", mode, err)
		}
		rows, err := conn.Query(ctx, `SELECT b FROM blobs WHERE id = $1`, mode, id)
		if err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		var got []byte
		for rows.Next() {
			if err := rows.Scan(&got); err != nil {
				t.Fatalf("mode %v: scan: %v", mode, err)
			}
		}
		if oid := rows.FieldDescriptions()[0].DataTypeOID; oid != 17 {
			t.Errorf("mode %v: column OID %d, want 17", mode, oid)
		}
		if err := rows.Err(); err != nil || !bytes.Equal(got, raw) {
			t.Errorf("mode %v: read back %x, want %x (%v)", mode, got, raw, err)
		}
	}
	wantRows(t, conn, `SELECT id, length(b), b = '\x0001feff615c80'::bytea FROM blobs ORDER BY id`, "1 7 t", "2 7 t")

	if _, err := conn.Exec(ctx, `INSERT INTO bev VALUES ($1, $2)`, int32(7), raw); err != nil {
		t.Fatal(err)
	}
	_, js := testutil.JetStream(t, srv.NATSURL())
	s, err := js.Stream(ctx, "streamdb_bev")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.GetLastMsgForSubject(ctx, "bytea.events")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"k":7,"b":"\\x0001feff615c80"}`; string(msg.Data) != want {
		t.Errorf("event %s, want %s", msg.Data, want)
	}
	want := `7 \x0001feff615c8000ff`
	poll(t, 30*time.Second, func() error {
		got, err := textRowsErr(ctx, conn, `SELECT * FROM btagged`)
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0] != want {
			return fmt.Errorf("btagged is %q, want %q", got, want)
		}
		return nil
	})
	srv.Restart(t)
	conn = srv.Conn(t)
	wantRows(t, conn, `SELECT * FROM btagged`, want)
}
