package front

import "testing"

func TestWithoutExponent(t *testing.T) {
	for _, c := range []struct{ lit, want string }{
		{"1.5e-3", "0.0015"},
		{"1.500e-3", "0.001500"},
		{"2.50e1", "25.0"},
		{"1e5", "100000."},
		{"1E+2", "100."},
		{"0e5", "0."},
		{"0.0e-3", "0.0000"},
		{".5e1", "5."},
		{"1.e3", "1000."},
		{"12345678901234567890.5e-5", "123456789012345.678905"},
		{"0012.5e1", "125."},
	} {
		got, ok := withoutExponent(c.lit)
		if !ok || got != c.want {
			t.Errorf("withoutExponent(%q) = %q, %v; want %q", c.lit, got, ok, c.want)
		}
	}
	for _, lit := range []string{"15", "1.5", "1e400", "1e-400", "0xe5"} {
		if got, ok := withoutExponent(lit); ok {
			t.Errorf("withoutExponent(%q) = %q, want not ok", lit, got)
		}
	}
}

func TestNumberForParser(t *testing.T) {
	for lit, want := range map[string]string{
		"15":                        "15",
		"1.5e-3":                    "0.0015",
		"1e5":                       "1e5",
		"12.3e5":                    "12.3e5",
		"1e300":                     "1e300",
		"1e400":                     CastFunc + "('1e400','numeric')",
		"1e-400":                    CastFunc + "('1e-400','numeric')",
		"1234567890123456789e3":     CastFunc + "('1234567890123456789e3','numeric')",
		"12345678901234567890.5e-5": "123456789012345.678905",
		"0x1e5":                     "0x1e5",
	} {
		var got string
		toks := numberForParser(token{kind: tkNumber, val: lit})
		if toks == nil {
			got = lit
		}
		for _, tk := range toks {
			if tk.kind == tkString {
				got += "'" + tk.val + "'"
			} else {
				got += tk.val
			}
		}
		if got != want {
			t.Errorf("%s: handed over as %s, want %s", lit, got, want)
		}
	}
}
