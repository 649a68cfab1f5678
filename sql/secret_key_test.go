package sql

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamdb/sqlerr"
)

func TestSecretBox(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret.key")
	if _, err := openSecretBox(path, true); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a given key file that does not exist: %v, want an error saying so", err)
	}
	b, err := openSecretBox(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file made with %v (%v), want mode 0600", fi.Mode(), err)
	}
	const value = "pw-Plain-Text-41"
	s, err := b.seal(value)
	if err != nil {
		t.Fatal(err)
	}
	if s.Value != "" || bytes.Contains(s.Sealed, []byte(value)) {
		t.Fatalf("sealed secret holds its plaintext: %+v", s)
	}
	if s2, _ := b.seal(value); bytes.Equal(s.Sealed, s2.Sealed) {
		t.Fatal("sealing a value twice gives the same ciphertext: nonces repeat")
	}
	again, err := openSecretBox(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.open("pw", s); err != nil || got != value {
		t.Fatalf("open with the key read back: %q, %v", got, err)
	}

	other, err := openSecretBox(filepath.Join(dir, "other.key"), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.open("pw", s); sqlerr.Code(err) != sqlerr.ConfigFileError || !strings.Contains(err.Error(), "another key") {
		t.Fatalf("open under another key: %v, want %s naming another key", err, sqlerr.ConfigFileError)
	}
	bad := *s
	bad.Sealed = append([]byte(nil), s.Sealed...)
	bad.Sealed[len(bad.Sealed)-1] ^= 1
	if _, err := b.open("pw", &bad); sqlerr.Code(err) != sqlerr.DataCorrupted {
		t.Fatalf("open of a damaged value: %v, want %s", err, sqlerr.DataCorrupted)
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openSecretBox(path, false); err == nil || !strings.Contains(err.Error(), "64 hexadecimal digits") {
		t.Fatalf("a key file of the wrong form: %v", err)
	}
}
