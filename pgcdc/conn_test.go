package pgcdc

import (
	"errors"
	"testing"
)

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

// TestParseConfigRefusesFileKeys: a key that would make the parser read a
// file of the server's machine is refused before any file is read (the
// file named here exists and is not a certificate, so reading it would
// give a different error), as is a key sent to the source as a run-time
// parameter; the keys a source needs are taken.
func TestParseConfigRefusesFileKeys(t *testing.T) {
	for _, c := range []struct {
		dsn, key string
		file     bool
	}{
		{"host=db sslrootcert=/etc/hostname sslmode=verify-full", "sslrootcert", true},
		{"host=db sslcert=/etc/hostname sslkey=/etc/hostname", "sslcert", true},
		{"postgres://u@db/shop?passfile=/etc/hostname", "passfile", true},
		{"host=db servicefile=/etc/hostname service=x", "service", true},
		{"host=db search_path=x", "search_path", false},
	} {
		_, err := ParseConfig(c.dsn)
		refused, ok := errors.AsType[*KeyRefusedError](err)
		if !ok {
			t.Errorf("ParseConfig(%q) = %v, want a refused key", c.dsn, err)
			continue
		}
		// Either of two refused keys may be named first.
		if refused.File != c.file || (refused.Key != c.key && !fileKeys[refused.Key]) {
			t.Errorf("ParseConfig(%q) refused %+v, want key %q (file %v)", c.dsn, refused, c.key, c.file)
		}
	}
	for _, dsn := range []string{
		"host=db port=5433 dbname=shop user=repl password=p sslmode=require connect_timeout=5",
		"postgres://repl:p@db:5433/shop?sslmode=disable&application_name=x",
	} {
		if _, err := ParseConfig(dsn); err != nil {
			t.Errorf("ParseConfig(%q): %v", dsn, err)
		}
	}
}
