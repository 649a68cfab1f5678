package types

import (
	"testing"

	"streamdb/sqlerr"
)

// TestUUIDInput checks uuid_in's forms against PostgreSQL 15's answers:
// the output, or "" for 22P02.
func TestUUIDInput(t *testing.T) {
	const want = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
	for in, out := range map[string]string{
		"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11":     want,
		"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11":     want,
		"{a0eebc999c0b4ef8bb6d6bb9bd380a11}":       want,
		"a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11":  want,
		"a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11":      want,
		"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}":   want,
		"00000000000000000000000000000000":         "00000000-0000-0000-0000-000000000000",
		" a0eebc999c0b4ef8bb6d6bb9bd380a11":        "",
		"a0eebc999c0b4ef8bb6d6bb9bd380a11 ":        "",
		"a0eebc999c0b4ef8bb6d6bb9bd380a1":          "",
		"a0eebc999c0b4ef8bb6d6bb9bd380a111":        "",
		"{a0eebc999c0b4ef8bb6d6bb9bd380a11":        "",
		"a0eebc999c0b4ef8bb6d6bb9bd380a11}":        "",
		"a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11-":     "",
		"a0e-ebc99-9c0b4ef8-bb6d6bb9-bd380a11":     "",
		"a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11":    "",
		"-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11":    "",
		"g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11":     "",
		"{{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}}": "",
		"": "",
	} {
		d, err := ParseText(in, UUID)
		switch {
		case out == "" && err == nil:
			t.Errorf("%q read as %s, PostgreSQL refuses it", in, FormatText(d, UUID))
		case out == "" && sqlerr.Code(err) != sqlerr.InvalidTextRepresentation:
			t.Errorf("%q: error %v, want 22P02", in, err)
		case out != "" && err != nil:
			t.Errorf("%q: %v, want %s", in, err, out)
		case out != "" && FormatText(d, UUID) != out:
			t.Errorf("%q read as %s, want %s", in, FormatText(d, UUID), out)
		}
	}
	if _, err := ParseUUID("x"); err == nil || err.Error() != `invalid input syntax for type uuid: "x"` {
		t.Errorf("error text %q", err)
	}
}

// TestRandomUUID: version 4, RFC 4122 variant, distinct.
func TestRandomUUID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		u := RandomUUID()
		if len(u.S) != UUIDLen || u.S[6]>>4 != 4 || u.S[8]>>6 != 2 {
			t.Fatalf("%s is not a version 4 uuid", FormatUUID(u.S))
		}
		if seen[u.S] {
			t.Fatalf("%s came twice", FormatUUID(u.S))
		}
		seen[u.S] = true
	}
}
