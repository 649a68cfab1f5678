package e2e

import (
	"strings"
	"testing"
)

// TestSubjectPatternOwnership: a subject pattern stands for every subject
// it matches, so a role that is no superuser may not declare a pattern
// that matches another role's stream's subject, a sink's subject or a
// table's changelog (it would read their rows without a grant), nor a
// subject another role's pattern matches. Its own subjects it may cover.
func TestSubjectPatternOwnership(t *testing.T) {
	srv := startServer(t)
	admin := srv.Conn(t)
	exec(t, admin,
		"CREATE STREAM visa (num TEXT) WITH (subject = 'cards.visa')",
		"INSERT INTO visa VALUES ('4111-1111-1111-1111')",
		"CREATE USER mallory",
		"CREATE USER bob",
		"GRANT CREATE ON DATABASE streamdb TO mallory",
		"GRANT CREATE ON DATABASE streamdb TO bob")
	mallory := connectAs(t, srv, "mallory")
	for _, pattern := range []string{"cards.*", "cards.>"} {
		pe := wantExecCode(t, mallory, "CREATE STREAM spy (num TEXT) WITH (subject = '"+pattern+"')", "42501")
		if pe != nil && (pe.Message != `permission denied for subject "`+pattern+`": it belongs to stream visa` || !strings.Contains(pe.Hint, "GRANT SELECT ON visa TO mallory")) {
			t.Errorf("%s: message %q hint %q", pattern, pe.Message, pe.Hint)
		}
	}
	pe := wantExecCode(t, mallory, "CREATE STREAM spy (v TEXT) WITH (subject = 'streamdb.>')", "42501")
	if pe != nil && !strings.Contains(pe.Message, "changelog") {
		t.Errorf("message %q, want it to say the subject holds a table's changelog", pe.Message)
	}
	exec(t, admin,
		"CREATE MATERIALIZED VIEW card_list AS SELECT num FROM visa",
		"CREATE SINK card_out FROM card_list INTO 'out.cards'")
	wantExecCode(t, mallory, "CREATE STREAM spy (num TEXT) WITH (subject = 'out.*')", "42501")
	wantRows(t, admin, "SELECT count(*) FROM pg_catalog.pg_class WHERE relname = 'spy'", "0")

	// A role's pattern covers its own streams' subjects; another role may
	// declare neither a subject the pattern matches nor an overlapping
	// pattern.
	exec(t, mallory,
		"CREATE STREAM m_eu (v TEXT) WITH (subject = 'mal.eu.created')",
		"CREATE STREAM m_all (v TEXT) WITH (subject = 'mal.>')")
	bob := connectAs(t, srv, "bob")
	wantExecCode(t, bob, "CREATE STREAM b1 (v TEXT) WITH (subject = 'mal.us.created')", "42501")
	wantExecCode(t, bob, "CREATE STREAM b1 (v TEXT) WITH (subject = 'mal.*.created')", "42501")
	exec(t, bob, "CREATE STREAM b1 (v TEXT) WITH (subject = 'bob.>')")

	// A superuser may, and reads what the subjects hold.
	exec(t, admin, "CREATE STREAM all_cards (num TEXT) WITH (subject = 'cards.>')")
	wantRows(t, admin, "SELECT num FROM all_cards", "4111-1111-1111-1111")
}
