package sql

import "testing"

func TestScramOf(t *testing.T) {
	v, err := scramOf("secret")
	if err != nil || len(v) < 20 {
		t.Fatalf("scramOf: %q, %v", v, err)
	}
	again, err := scramOf(v) // a verifier is kept as given
	if err != nil || again != v {
		t.Fatalf("verifier: %q, %v", again, err)
	}
	if _, err := scramOf("SCRAM-SHA-256$bad"); err == nil {
		t.Error("a malformed verifier was accepted")
	}
	if _, err := scramOf("md5" + "0123456789abcdef0123456789abcdef"); err == nil {
		t.Error("an md5 hash was accepted")
	}
	if v, err := scramOf(""); err != nil || v != "" {
		t.Errorf("empty password: %q, %v", v, err)
	}
}
