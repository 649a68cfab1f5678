package types

import "testing"

func TestNumericModifierScales(t *testing.T) {
	for _, c := range []struct {
		name      string
		p, s      int
		typmod    int32
		wantError string
	}{
		{name: "numeric(10,2)", p: 10, s: 2, typmod: 10<<16 | 2 + 4},
		{name: "numeric(2,5)", p: 2, s: 5, typmod: 2<<16 | 5 + 4},
		{name: "numeric(3,-2)", p: 3, s: -2, typmod: 198658},
		{name: "numeric(3,1001)", wantError: "NUMERIC scale 1001 must be between -1000 and 1000"},
		{name: "numeric(1001,2)", wantError: "NUMERIC precision 1001 must be between 1 and 1000"},
	} {
		_, m, err := ParseWithModifier(c.name)
		if c.wantError != "" {
			if err == nil || err.Error() != c.wantError {
				t.Errorf("%s: error %v, want %q", c.name, err, c.wantError)
			}
			continue
		}
		if err != nil || m.Precision != c.p || m.Scale != c.s {
			t.Errorf("%s: %+v, %v", c.name, m, err)
			continue
		}
		if got := m.NumericTypmod(); got != c.typmod {
			t.Errorf("%s: typmod %d, want %d", c.name, got, c.typmod)
		}
		if back := NumericModifierOf(int64(m.NumericTypmod())); back.Precision != c.p || back.Scale != c.s {
			t.Errorf("%s: typmod decodes to %+v", c.name, back)
		}
	}
}
