package pgcdc

import "testing"

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"host=h user=u password=secret dbname=d", "host=h user=u password=xxxxx dbname=d"},
		{"host=h PASSWORD=secret", "host=h PASSWORD=xxxxx"},
		{"postgres://u:secret@h:5432/d?sslmode=disable", "postgres://u:xxxxx@h:5432/d?sslmode=disable"},
		{"postgresql://u@h/d?password=secret", "postgresql://u@h/d?password=xxxxx"},
		{"host=h user=u", "host=h user=u"},
		{"host=h password='two words' user=u", "host=h password=xxxxx user=u"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestQuoteIdent(t *testing.T) {
	for in, want := range map[string]string{"orders": `"orders"`, `we"ird`: `"we""ird"`, "User": `"User"`} {
		if got := quoteIdent(in); got != want {
			t.Errorf("quoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestWithPassword(t *testing.T) {
	for _, dsn := range []string{
		"host=db user=repl dbname=shop",
		"host=db user=repl password=old dbname=shop",
		"postgres://repl@db/shop?sslmode=disable",
		"postgres://repl:old@db/shop?password=older",
	} {
		for _, pw := range []string{"s3cret", `it's a \ secret`, "p@ss:w/rd?"} {
			cfg, err := ParseConfig(WithPassword(dsn, pw))
			if err != nil {
				t.Fatalf("WithPassword(%q, %q): %v", dsn, pw, err)
			}
			if cfg.Password != pw || cfg.User != "repl" || cfg.Host != "db" {
				t.Errorf("WithPassword(%q, %q) gives user %q password %q host %q", dsn, pw, cfg.User, cfg.Password, cfg.Host)
			}
		}
	}
}
