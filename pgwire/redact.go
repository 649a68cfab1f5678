package pgwire

import "strings"

// mentionsSecret reports whether query has the word SECRET; it is looked
// for in every statement, so without allocating.
func mentionsSecret(query string) bool {
	word := func(c byte) bool {
		return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
	}
	for i := 0; i+6 <= len(query); i++ {
		if c := query[i]; (c == 's' || c == 'S') && strings.EqualFold(query[i:i+6], "secret") &&
			(i == 0 || !word(query[i-1])) && (i+6 == len(query) || !word(query[i+6])) {
			return true
		}
	}
	return false
}

// redactSecrets returns query with its string literals (quoted '...',
// E'...' or $tag$...$tag$) replaced by '<redacted>' when it mentions
// SECRET (CREATE SECRET name AS 'value' and the like), so that what
// pg_stat_activity shows never carries a secret's value. Other queries
// are returned as they are.
func redactSecrets(query string) string {
	if !mentionsSecret(query) {
		return query
	}
	var b strings.Builder
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'':
			escapes := i > 0 && (query[i-1] == 'E' || query[i-1] == 'e')
			j := i + 1
			for j < len(query) {
				if escapes && query[j] == '\\' {
					j += 2
					continue
				}
				if query[j] == '\'' {
					if j+1 < len(query) && query[j+1] == '\'' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			b.WriteString("'<redacted>'")
			i = j + 1
		case c == '$':
			tag, ok := dollarTag(query[i:])
			if !ok {
				b.WriteByte(c)
				i++
				continue
			}
			end := strings.Index(query[i+len(tag):], tag)
			b.WriteString("'<redacted>'")
			if end < 0 {
				i = len(query)
			} else {
				i += 2*len(tag) + end
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// dollarTag returns the $tag$ that s starts with.
func dollarTag(s string) (string, bool) {
	for j := 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '$':
			return s[:j+1], true
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 1 && c >= '0' && c <= '9' || c >= 0x80:
		default:
			return "", false
		}
	}
	return "", false
}
