package catalog

import (
	"strings"
	"testing"
)

func TestObjectName(t *testing.T) {
	long := strings.Repeat("t", 63)
	for _, c := range []struct{ name1, name2, label, want string }{
		{"t", "", "pkey", "t_pkey"},
		{"t", "a_b", "key", "t_a_b_key"},
		{long, "", "pkey", strings.Repeat("t", 58) + "_pkey"},
		{long, "", "progress", strings.Repeat("t", 54) + "_progress"},
		// The longer name is cut first, then both alike.
		{long, "abc", "fkey", strings.Repeat("t", 54) + "_abc_fkey"},
		{long, strings.Repeat("c", 40), "key", strings.Repeat("t", 29) + "_" + strings.Repeat("c", 29) + "_key"},
		// A cut never splits a UTF-8 character: 29 "é" are 58 bytes, so
		// 57 bytes keep 28 of them.
		{strings.Repeat("é", 31), "", "check", strings.Repeat("é", 28) + "_check"},
	} {
		got := ObjectName(c.name1, c.name2, c.label)
		if got != c.want {
			t.Errorf("ObjectName(%q, %q, %q) = %q, want %q", c.name1, c.name2, c.label, got, c.want)
		}
		if len(got) > MaxIdentifierBytes {
			t.Errorf("ObjectName(%q, %q, %q) is %d bytes", c.name1, c.name2, c.label, len(got))
		}
	}
}
