package sql

import (
	"context"
	"strings"
	"testing"

	"streamdb/meta"
	"streamdb/pgwire"
)

// TestFakeEngineLogins: who may open a session and with which password.
// A created role without LOGIN is refused (28000) even where no password
// is asked; a user's PASSWORD is stored as a SCRAM verifier that checks
// that password and no other; a role without a password, or one that may
// not log in, has no verifier (the client fails as for a wrong
// password); the bootstrap user is answered by the server's own
// authenticator.
func TestFakeEngineLogins(t *testing.T) {
	f := newFakeEngine(t)
	s := f.session("default", "")
	for _, stmt := range []string{
		"CREATE ROLE readers",
		"CREATE USER alice PASSWORD 'secret one'",
		"CREATE USER bob",
		"CREATE ROLE carol PASSWORD 'x' NOLOGIN",
		"CREATE USER dave PASSWORD 'md5" + strings.Repeat("0", 32) + "'",
	} {
		got := run(s, stmt, nil, nil)
		if strings.HasPrefix(stmt, "CREATE USER dave") {
			if !strings.HasPrefix(got, "error 0A000: MD5 password hashes are not supported") {
				t.Fatalf("%s: %q, want 0A000", stmt, got)
			}
			continue
		}
		if got != "CREATE ROLE\n" {
			t.Fatalf("%s: %q", stmt, got)
		}
	}
	ctx := context.Background()
	for user, wantErr := range map[string]string{"readers": "28000", "carol": "28000", "alice": "", "bob": "", "nobody": "", meta.BootstrapUser: ""} {
		_, err := f.NewSession(ctx, map[string]string{"user": user, "database": "streamdb"})
		if code := codeOf(err); code != wantErr {
			t.Errorf("NewSession(%s): %v, want SQLSTATE %q", user, err, wantErr)
		}
	}
	boot, err := pgwire.NewSCRAMVerifier("boot")
	if err != nil {
		t.Fatal(err)
	}
	auth := f.Authenticator(pgwire.StaticUsers{meta.BootstrapUser: boot})
	verifier := func(user string) *pgwire.SCRAMVerifier {
		v, err := auth.SCRAMVerifier(ctx, user)
		if err != nil {
			t.Fatalf("SCRAMVerifier(%s): %v", user, err)
		}
		return v
	}
	if v := verifier("alice"); v == nil || !v.Verify("secret one") || v.Verify("secret two") {
		t.Errorf("alice's verifier %v does not check her password", v)
	}
	for _, user := range []string{"bob", "carol", "readers", "nobody"} {
		if v := verifier(user); v != nil {
			t.Errorf("%s has a verifier, want none", user)
		}
	}
	if v := verifier(meta.BootstrapUser); v == nil || !v.Verify("boot") {
		t.Errorf("the bootstrap user's verifier is not the server's")
	}
	if got := run(s, "ALTER USER alice PASSWORD 'secret two'", nil, nil); got != "ALTER ROLE\n" {
		t.Fatalf("alter password: %q", got)
	}
	if v := verifier("alice"); v == nil || !v.Verify("secret two") || v.Verify("secret one") {
		t.Errorf("alice's verifier after ALTER USER does not check the new password")
	}
}

// codeOf is err's SQLSTATE, "" for nil.
func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(strings.SplitN(strings.TrimPrefix(errorLine(err), "error "), ":", 2)[0])
}
