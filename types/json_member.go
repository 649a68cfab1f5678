package types

import "strings"

// JSONBMemberRaw looks key up among the top-level members of s, the
// canonical text of a jsonb value (NewJSONB's), without parsing it: raw is
// the member's value as it stands in s, which is itself the canonical
// text of that value, and found says whether s is an object with such a
// member. ok is false where the scan does not apply (a member key with an
// escape in it): the caller parses s then. jsonb -> and ->> with a text
// key read one member of what is often a whole message; parsing all of
// it, numbers to decimals included, for each would cost more than the
// rest of a view's work.
func JSONBMemberRaw(s, key string) (raw string, found, ok bool) {
	i := skipJSONSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return "", false, true
	}
	i = skipJSONSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return "", false, true
	}
	for i < len(s) {
		if s[i] != '"' {
			return "", false, false
		}
		end := strings.IndexByte(s[i+1:], '"')
		if end < 0 {
			return "", false, false
		}
		k := s[i+1 : i+1+end]
		if strings.IndexByte(k, '\\') >= 0 {
			return "", false, false
		}
		i = skipJSONSpace(s, i+end+2)
		if i >= len(s) || s[i] != ':' {
			return "", false, false
		}
		start := skipJSONSpace(s, i+1)
		stop := skipJSONRaw(s, start)
		if stop < 0 {
			return "", false, false
		}
		if k == key {
			return s[start:stop], true, true
		}
		i = skipJSONSpace(s, stop)
		if i >= len(s) {
			return "", false, false
		}
		if s[i] == '}' {
			return "", false, true
		}
		if s[i] != ',' {
			return "", false, false
		}
		i = skipJSONSpace(s, i+1)
	}
	return "", false, false
}

func skipJSONSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipJSONRaw returns the offset after the valid JSON value at s[i], or
// -1 if it does not end.
func skipJSONRaw(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	switch s[i] {
	case '"':
		return skipJSONString(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				e := skipJSONString(s, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	for j := i; j < len(s); j++ {
		switch s[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return len(s)
}

// skipJSONString returns the offset after the string whose '"' is at
// s[i], or -1.
func skipJSONString(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}
