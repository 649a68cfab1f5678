package broker

import (
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// IsPattern reports whether subject holds a NATS wildcard token (* or >):
// a stream on it reads every subject it matches.
func IsPattern(subject string) bool {
	for _, t := range strings.Split(subject, ".") {
		if t == "*" || t == ">" {
			return true
		}
	}
	return false
}

// SubjectsCollide reports whether some literal subject matches both a and
// b (each a literal subject or a pattern).
func SubjectsCollide(a, b string) bool { return server.SubjectsCollide(a, b) }

// SubjectCovers reports whether every subject that sub matches (sub a
// literal subject or a pattern) also matches pattern.
func SubjectCovers(pattern, sub string) bool { return server.SubjectMatchesFilter(sub, pattern) }
