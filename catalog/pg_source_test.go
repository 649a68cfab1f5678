package catalog

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestPGSourceOldDescriptor: a source stored before the SSL secrets
// existed loads with none, and one with them keeps them.
func TestPGSourceOldDescriptor(t *testing.T) {
	old := `{"name":"pg","kind":"source","source":{"connection":"host=db","password_secret":"pw","publication":"p","slot":"s","progress":"pg_progress","tables":[]}}`
	var d Descriptor
	if err := json.Unmarshal([]byte(old), &d); err != nil {
		t.Fatal(err)
	}
	if d.Source == nil || d.Source.SSLCASecret != "" || d.Source.SSLCertSecret != "" || d.Source.SSLKeySecret != "" {
		t.Fatalf("old descriptor loads as %+v", d.Source)
	}
	if got := d.Source.Secrets(); !slices.Equal(got, []string{"pw"}) {
		t.Errorf("Secrets() = %v, want [pw]", got)
	}
	d.Source.SSLCASecret, d.Source.SSLCertSecret, d.Source.SSLKeySecret = "ca", "cert", "pw"
	text, err := json.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	var back Descriptor
	if err := json.Unmarshal(text, &back); err != nil {
		t.Fatal(err)
	}
	if back.Source.SSLCASecret != "ca" || back.Source.SSLCertSecret != "cert" || back.Source.SSLKeySecret != "pw" {
		t.Errorf("round trip gives %+v", back.Source)
	}
	if got := back.Source.Secrets(); !slices.Equal(got, []string{"pw", "ca", "cert"}) {
		t.Errorf("Secrets() = %v, want [pw ca cert]", got)
	}
}
