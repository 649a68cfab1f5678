package pgwire

import (
	"strings"
	"testing"
)

func TestRedactSecrets(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"CREATE SECRET pw AS 's3cret'", "CREATE SECRET pw AS '<redacted>'"},
		{"create secret pw as 'it''s'", "create secret pw as '<redacted>'"},
		{`ALTER SECRET pw AS E'a\'b'`, `ALTER SECRET pw AS E'<redacted>'`},
		{"CREATE SECRET pw AS $x$s3cret$x$", "CREATE SECRET pw AS '<redacted>'"},
		{"CREATE SECRET pw AS $$s3cret", "CREATE SECRET pw AS '<redacted>'"},
		{"SELECT 1; CREATE SECRET pw AS 'a'", "SELECT 1; CREATE SECRET pw AS '<redacted>'"},
		{"SELECT 'secretive' FROM t WHERE a = $1", "SELECT 'secretive' FROM t WHERE a = $1"},
		{"SELECT 'x' FROM secrets_t", "SELECT 'x' FROM secrets_t"},
	} {
		if got := redactSecrets(c.in); got != c.want {
			t.Errorf("redactSecrets(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.Contains(c.want, "<redacted>") && strings.Contains(redactSecrets(c.in), "s3cret") {
			t.Errorf("redactSecrets(%q) keeps the secret", c.in)
		}
	}
}
