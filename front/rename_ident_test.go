package front

import "testing"

func TestRenameColumnRefs(t *testing.T) {
	for _, c := range []struct{ in, from, to, want string }{
		{"qty > 0", "qty", "amount", "amount > 0"},
		{"(qty > 0) AND qty < 10", "qty", "amount", "(amount > 0) AND amount < 10"},
		{`"Qty" > 0 AND qty > 1`, "Qty", "n", `n > 0 AND qty > 1`},
		{"t.qty > 0", "qty", "New", `t."New" > 0`},
		{"length(qty::text) > 0", "text", "x", "length(qty::text) > 0"},
		{"text(qty) > 'qty'", "text", "x", "text(qty) > 'qty'"},
		{"qty.a > 0", "qty", "x", "qty.a > 0"},
	} {
		got, _, err := RenameColumnRefs(c.in, c.from, c.to)
		if err != nil || got != c.want {
			t.Errorf("RenameColumnRefs(%q, %q, %q) = %q, %v; want %q", c.in, c.from, c.to, got, err, c.want)
		}
	}
}
