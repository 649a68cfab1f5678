package e2e

import (
	"strings"
	"testing"
)

// TestStreamSubjectBelongsToItsStream: a role with CREATE declaring a
// stream on another role's stream's subject would read that stream's rows
// and inject its own without a grant. Only the first stream's owner or a
// superuser may declare a second stream on a subject, and only a sink's
// owner or a superuser a stream on the sink's subject; a subject under the
// tables' changelog prefix is a superuser's only.
func TestStreamSubjectBelongsToItsStream(t *testing.T) {
	srv := startServer(t)
	admin := srv.Conn(t)
	exec(t, admin,
		"CREATE STREAM cards (num TEXT) WITH (subject = 'cards')",
		"INSERT INTO cards VALUES ('4111-1111-1111-1111')",
		"CREATE USER mallory",
		"CREATE USER bob",
		"GRANT CREATE ON DATABASE streamdb TO mallory",
		"GRANT CREATE ON DATABASE streamdb TO bob")
	mallory := connectAs(t, srv, "mallory")
	pe := wantExecCode(t, mallory, "CREATE STREAM mycards (num TEXT) WITH (subject = 'cards')", "42501")
	if pe != nil && (pe.Message != `permission denied for subject "cards": it belongs to stream cards` || !strings.Contains(pe.Hint, "GRANT SELECT ON cards TO mallory")) {
		t.Errorf("message %q hint %q", pe.Message, pe.Hint)
	}
	// Without a subject option the subject is the name.
	exec(t, admin, "CREATE STREAM orders (id INT)")
	wantExecCode(t, mallory, "CREATE STREAM x (id INT) WITH (subject = 'orders')", "42501")
	pe = wantExecCode(t, mallory, "CREATE STREAM log (v TEXT) WITH (subject = 'streamdb.table.payroll')", "42501")
	if pe != nil && !strings.Contains(pe.Message, "changelog") {
		t.Errorf("message %q, want it to say the subject holds a table's changelog", pe.Message)
	}
	wantExecCode(t, mallory, "CREATE TABLE t (id INT PRIMARY KEY) APPEND ONLY WITH (subject = 'cards')", "42501")
	// A sink's subject carries its view's rows.
	exec(t, admin,
		"CREATE MATERIALIZED VIEW card_list AS SELECT num FROM cards",
		"CREATE SINK card_out FROM card_list INTO 'out.cards'")
	pe = wantExecCode(t, mallory, "CREATE STREAM leak (num TEXT) WITH (subject = 'out.cards')", "42501")
	if pe != nil && pe.Message != `permission denied for subject "out.cards": sink card_out publishes the rows of card_list there` {
		t.Errorf("message %q", pe.Message)
	}
	wantRows(t, admin, "SELECT count(*) FROM pg_catalog.pg_class WHERE relname IN ('mycards', 'x', 'log', 't', 'leak')", "0")

	// The owner of a stream may declare another on its subject; others
	// may not; a superuser may.
	exec(t, mallory,
		"CREATE STREAM mine (v TEXT)",
		"CREATE STREAM mine_again (v TEXT) WITH (subject = 'mine')")
	bob := connectAs(t, srv, "bob")
	wantExecCode(t, bob, "CREATE STREAM bobs (v TEXT) WITH (subject = 'mine')", "42501")
	exec(t, bob, "CREATE STREAM bobs (v TEXT) WITH (subject = 'bobs')")
	exec(t, admin, "CREATE STREAM cards_copy (num TEXT) WITH (subject = 'cards')")
}
