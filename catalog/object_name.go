package catalog

import "unicode/utf8"

// MaxIdentifierBytes is PostgreSQL's identifier limit (NAMEDATALEN - 1).
const MaxIdentifierBytes = 63

// ObjectName makes the name PostgreSQL derives for an object from others,
// as its makeObjectName does: name1, then "_" name2 unless name2 is empty,
// then "_" label unless label is empty, with name1 and name2 cut (the
// longer first, never inside a UTF-8 character) so that the whole fits in
// MaxIdentifierBytes. So table t's primary key is t_pkey, but a 63-byte
// table name keeps 58 bytes before "_pkey", as in PostgreSQL.
func ObjectName(name1, name2, label string) string {
	overhead := 0
	if name2 != "" {
		overhead++
	}
	if label != "" {
		overhead += len(label) + 1
	}
	n1, n2 := len(name1), len(name2)
	for n1+n2 > MaxIdentifierBytes-overhead {
		if n1 > n2 {
			n1--
		} else {
			n2--
		}
	}
	out := clipUTF8(name1, n1)
	if name2 != "" {
		out += "_" + clipUTF8(name2, n2)
	}
	if label != "" {
		out += "_" + label
	}
	return out
}

// PrimaryKeyName is the name of table's primary key constraint and index.
func PrimaryKeyName(table string) string { return ObjectName(table, "", "pkey") }

// clipUTF8 returns s's first n bytes, less a UTF-8 character cut there.
func clipUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
