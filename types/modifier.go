package types

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Modifier is a type's declared size: VARCHAR(n) or NUMERIC(p, s). The zero
// value means none.
type Modifier struct {
	Length int // character varying(n), character(n)
	// Fixed marks character(n) (bpchar): values are kept without trailing
	// spaces, which are insignificant to it, and are padded with spaces
	// to Length on output.
	Fixed     bool
	Precision int // numeric(p, s)
	Scale     int
	// FloatDigits, for float result columns only, is the number of
	// significant digits of text output when a session sets
	// extra_float_digits below 1 (15 + extra_float_digits); 0 means
	// shortest exact output.
	FloatDigits int
	// TimePrecision is time(p)'s p, the fractional digits of seconds
	// kept (values are rounded to it); it counts only when HasTimePrecision.
	TimePrecision    int
	HasTimePrecision bool
}

// IsZero reports whether there is no size modifier.
func (m Modifier) IsZero() bool { return m.Length == 0 && m.Precision == 0 && !m.HasTimePrecision }

// Suffix renders the modifier as it follows a type name: "(20)", "(10,2)".
func (m Modifier) Suffix() string {
	switch {
	case m.Length > 0:
		return fmt.Sprintf("(%d)", m.Length)
	case m.Precision > 0:
		return fmt.Sprintf("(%d,%d)", m.Precision, m.Scale)
	case m.HasTimePrecision:
		return fmt.Sprintf("(%d)", m.TimePrecision)
	}
	return ""
}

// ParseWithModifier reads a type name with an optional modifier, such as
// "character varying(20)" or "numeric(10, 2)".
func ParseWithModifier(name string) (Type, Modifier, error) {
	t, err := Parse(name)
	if err != nil || t.IsArray() {
		return t, Modifier{}, err // an array's element modifier is not kept
	}
	fixed := FixedTypeName(name) != ""
	open := strings.IndexByte(name, '(')
	if open < 0 {
		if FixedTypeName(name) == "character" {
			return t, Modifier{Length: 1, Fixed: true}, nil // char is char(1)
		}
		return t, Modifier{}, nil // bare bpchar has no length: a string
	}
	close := strings.LastIndexByte(name, ')')
	if close < open {
		return t, Modifier{}, fmt.Errorf("type %q has a malformed modifier", name)
	}
	var nums []int
	for _, part := range strings.Split(name[open+1:close], ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 && t != Numeric {
			return t, Modifier{}, fmt.Errorf("type %q has a malformed modifier", name)
		}
		nums = append(nums, n)
	}
	switch {
	case t == Varchar && len(nums) == 1 && nums[0] > 0:
		return t, Modifier{Length: nums[0], Fixed: fixed}, nil
	case t == Numeric && len(nums) >= 1 && len(nums) <= 2:
		m, err := numericModifier(nums)
		return t, m, err
	case (t.IsTimeOfDay() || t.IsTime()) && len(nums) == 1:
		// PostgreSQL warns and reduces a precision above 6 to 6.
		return t, Modifier{TimePrecision: min(nums[0], MaxTimePrecision), HasTimePrecision: true}, nil
	case t == Interval || t == Float8 || t == Float4:
		return t, Modifier{}, nil // precisions accepted and ignored
	}
	return t, Modifier{}, fmt.Errorf("type modifier is not allowed for type %s", t)
}

// numericModifier is numeric(p) or numeric(p, s) as PostgreSQL 15 takes
// them: p in 1..1000 and s in -1000..1000, so a scale may exceed the
// precision (numeric(2, 5) holds 0.00012) or be negative (numeric(3, -2)
// rounds to hundreds and holds 12300).
func numericModifier(nums []int) (Modifier, error) {
	m := Modifier{Precision: nums[0]}
	if len(nums) == 2 {
		m.Scale = nums[1]
	}
	if m.Precision < 1 || m.Precision > NumericMaxPrecision {
		return Modifier{}, fmt.Errorf("NUMERIC precision %d must be between 1 and %d", m.Precision, NumericMaxPrecision)
	}
	if m.Scale < -NumericMaxPrecision || m.Scale > NumericMaxPrecision {
		return Modifier{}, fmt.Errorf("NUMERIC scale %d must be between %d and %d", m.Scale, -NumericMaxPrecision, NumericMaxPrecision)
	}
	return m, nil
}

// NumericTypmod is numeric(p, s)'s PostgreSQL type modifier
// (pg_attribute.atttypmod): (p << 16 | s in 11 bits, two's complement) + 4.
func (m Modifier) NumericTypmod() int32 {
	return (int32(m.Precision)<<16 | int32(m.Scale)&0x7ff) + 4
}

// NumericModifierOf decodes a numeric type modifier made by NumericTypmod.
func NumericModifierOf(typmod int64) Modifier {
	v := typmod - 4
	return Modifier{Precision: int(v >> 16 & 0xffff), Scale: int((v&0x7ff)^0x400) - 0x400}
}

// NumericMaxPrecision is numeric's largest precision, and the largest
// magnitude of its scale.
const NumericMaxPrecision = 1000

// FixedTypeName returns the name a character(n) type is written with,
// without its length: "character" for char and character, "bpchar" for
// bpchar; "" for other names (character varying included).
func FixedTypeName(name string) string {
	n := strings.ToLower(strings.Join(strings.Fields(name), " "))
	if i := strings.IndexByte(n, '('); i >= 0 {
		n = strings.TrimSpace(n[:i])
	}
	switch n {
	case "char", "character":
		return "character"
	case "bpchar":
		return "bpchar"
	}
	return ""
}

// TypeName is the PostgreSQL name of a column's type with its modifier,
// as format_type prints it: "character varying(20)", "character(3)".
func TypeName(t Type, m Modifier) string {
	if m.Fixed {
		return "character" + m.Suffix()
	}
	if (t.IsTimeOfDay() || t.IsTime()) && m.HasTimePrecision {
		// time(3) without time zone, timestamp(3) with time zone: the
		// precision follows the first word.
		name := t.String()
		word, rest, _ := strings.Cut(name, " ")
		return word + m.Suffix() + " " + rest
	}
	return t.String() + m.Suffix()
}

// OIDBpchar is character(n)'s type OID.
const OIDBpchar uint32 = 1042

// OID is the column's type OID: character(n) has its own.
func (c Column) OID() uint32 {
	if c.Mod.Fixed {
		return OIDBpchar
	}
	return c.Type.OID()
}

// PadFixed pads s with spaces to the length of a character(n) modifier,
// as character(n) values are shown; other strings are returned as they are.
func PadFixed(s string, m Modifier) string {
	if !m.Fixed {
		return s
	}
	if n := m.Length - utf8.RuneCountInString(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}
