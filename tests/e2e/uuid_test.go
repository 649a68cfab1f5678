package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"streamdb/tests/testutil"
)

// TestUUIDDriver: uuid through pgx, which binds and reads it in binary (16
// bytes, OID 2950): a table keyed by uuid, a view over it and a view over
// a stream read back the same bytes as PostgreSQL's table, in text and
// binary, also after a restart. The stream takes uuids as JSON strings in
// any input form; a message whose uuid is not one is skipped and counted.
// INSERT INTO the stream publishes the uuid's text form.
func TestUUIDDriver(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := startServer(t)
	ctx := testutil.Context(t, 3*time.Minute)
	conn, pgConn := srv.Conn(t), pg.Conn(t)
	ann := [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}
	one := pgtype.UUID{Bytes: [16]byte{15: 1}, Valid: true}
	for _, c := range []*pgx.Conn{conn, pgConn} {
		exec(t, c, `CREATE TABLE ids (id uuid PRIMARY KEY, n int)`)
		// A [16]byte and a pgtype.UUID go in binary, a string in text.
		for i, id := range []any{ann, one, "{FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF}"} {
			if _, err := c.Exec(ctx, `INSERT INTO ids VALUES ($1, $2)`, id, i+1); err != nil {
				t.Fatalf("INSERT %v: %v", id, err)
			}
		}
		_, err := c.Exec(ctx, `INSERT INTO ids VALUES ($1, 9)`, ann)
		wantCode(t, err, "23505")
	}
	var got [16]byte
	var n int
	if err := conn.QueryRow(ctx, `SELECT id, n FROM ids WHERE id = $1`, ann).Scan(&got, &n); err != nil || got != ann || n != 1 {
		t.Fatalf("SELECT by a binary uuid parameter: %x %d %v", got, n, err)
	}
	var u pgtype.UUID
	if err := conn.QueryRow(ctx, `SELECT id FROM ids WHERE n = 2`).Scan(&u); err != nil || u != one {
		t.Fatalf("pgtype.UUID: %v %v", u, err)
	}
	var ids []pgtype.UUID
	if err := conn.QueryRow(ctx, `SELECT array_agg(id ORDER BY id) FROM ids`).Scan(&ids); err != nil || len(ids) != 3 || ids[0] != one {
		t.Fatalf("uuid[] in binary: %v %v", ids, err)
	}

	exec(t, conn, `CREATE STREAM evs (id uuid, n int) WITH (subject = 'uuid.evs')`,
		`CREATE MATERIALIZED VIEW idsv AS SELECT * FROM ids`,
		`CREATE MATERIALIZED VIEW evsv AS SELECT id, sum(n) AS n FROM evs GROUP BY id`,
		`CREATE MATERIALIZED VIEW joined AS SELECT i.id, i.n, e.n AS m FROM ids i JOIN evsv e ON i.id = e.id`)
	_, js := testutil.JetStream(t, srv.NATSURL())
	for _, m := range []string{
		`{"id":"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11","n":1}`,
		`{"id":"{00000000000000000000000000000001}","n":2}`,
		`{"id":"nope","n":100}`,
		`{"id":"ffffffff-ffff-ffff-ffff-ffffffffffff","n":3}`,
	} {
		if _, err := js.Publish(ctx, "uuid.evs", []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, conn, `INSERT INTO evs VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 0)`)
	s, err := js.Stream(ctx, "streamdb_evs")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.GetLastMsgForSubject(ctx, "uuid.evs")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11","n":0}`; string(msg.Data) != want {
		t.Errorf("INSERT INTO evs published %s, want %s", msg.Data, want)
	}
	poll(t, 30*time.Second, func() error {
		if got := showStream(t, conn, "evs")["skipped_messages"]; got != "1" {
			return fmt.Errorf("skipped_messages %s, want 1", got)
		}
		if got, err := textRowsErr(ctx, conn, `SELECT count(*) FROM joined`); err != nil || len(got) != 1 || got[0] != "3" {
			return fmt.Errorf("joined has %v rows (%v)", got, err)
		}
		return nil
	})

	compare := func() {
		t.Helper()
		for _, binary := range []bool{false, true} {
			want := query{sql: `SELECT * FROM ids ORDER BY id`}.run(ctx, pgConn.PgConn(), binary)
			for _, sql := range []string{`SELECT * FROM ids ORDER BY id`, `SELECT * FROM idsv ORDER BY id`,
				`SELECT id, n FROM joined WHERE m = n ORDER BY id`} {
				q := query{sql: sql}
				if got := q.run(ctx, conn.PgConn(), binary); got != want {
					t.Errorf("%s (binary %v):\n got  %s\n want %s", q, binary, got, want)
				}
			}
			q := query{sql: `SELECT n FROM ids WHERE id = $1`, arg: "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"}
			if got, want := q.run(ctx, conn.PgConn(), binary), q.run(ctx, pgConn.PgConn(), binary); got != want {
				t.Errorf("%s (binary %v):\n got  %s\n want %s", q, binary, got, want)
			}
		}
	}
	compare()
	srv.Restart(t)
	conn = srv.Conn(t)
	compare()
	if _, err := conn.Exec(ctx, `INSERT INTO ids VALUES ($1, 9)`, ann); err == nil {
		t.Errorf("a duplicate uuid key was taken after the restart")
	} else {
		wantCode(t, err, "23505")
	}
}
