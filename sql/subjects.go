package sql

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"streamdb/sqlerr"
)

// maxSubjectLen is the longest subject a stream or table may use, in bytes.
const maxSubjectLen = 255

// reservedSubjectPrefixes are subjects NATS keeps for itself: "$" starts
// the JetStream API ($JS.), system events ($SYS.), key-value and object
// stores ($KV., $O.) and more; "_INBOX." is where replies arrive.
var reservedSubjectPrefixes = []string{"$", "_INBOX."}

// checkSubject refuses a subject CREATE STREAM or CREATE TABLE may not use:
// one NATS reserves (42602) or one that is not a literal subject (22023),
// with what to change. options are the statement's WITH options: without
// a subject option the subject came from the name. pattern allows the
// wildcards of a stream's subject pattern (checkPattern).
func checkSubject(subject string, options map[string]string, pattern bool) error {
	given, hasOption := options["subject"]
	fromName := !hasOption
	if hasOption && given == "" {
		subject = "" // WITH (subject = ''): empty, not the default
	}
	hint := "Use a subject of dot-separated tokens of letters, digits, '-' and '_', e.g. WITH (subject = 'orders.eu')."
	if fromName {
		hint = "The subject defaults to the name; give one with WITH (subject = '...'): dot-separated tokens of letters, digits, '-' and '_'."
	}
	for _, p := range reservedSubjectPrefixes {
		if strings.HasPrefix(subject, p) || subject == strings.TrimSuffix(p, ".") {
			return sqlerr.New(sqlerr.InvalidName, "subject %q is reserved by NATS (subjects starting with %q are the server's own)", clipSubject(subject), p).
				WithHint("%s", hint)
		}
	}
	bad := func(why string) error {
		return sqlerr.New(sqlerr.InvalidParameterValue, "subject %q is not a valid NATS subject: %s", clipSubject(subject), why).
			WithHint("%s", hint)
	}
	switch {
	case subject == "":
		return bad("it is empty")
	case len(subject) > maxSubjectLen:
		return bad("it is longer than 255 bytes")
	case !utf8.ValidString(subject):
		return bad("it is not valid UTF-8")
	case strings.ContainsAny(subject, "*>") && !pattern:
		return bad("a table or sink has one literal subject, without the wildcards * and >")
	case strings.IndexFunc(subject, unicode.IsSpace) >= 0:
		return bad("it contains whitespace")
	case strings.IndexFunc(subject, unicode.IsControl) >= 0:
		return bad("it contains a control character")
	case strings.HasPrefix(subject, ".") || strings.HasSuffix(subject, "."):
		return bad("it starts or ends with a dot")
	case strings.Contains(subject, ".."):
		return bad("it has an empty token (two dots in a row)")
	case pattern:
		return checkPattern(subject, bad)
	}
	return nil
}

// checkPattern checks the wildcards of a stream's subject: * stands for
// one whole token and > for all the tokens after it, so > comes last. The
// first token is literal: a pattern starting with a wildcard would match
// the subjects NATS and streamdb keep for themselves.
func checkPattern(subject string, bad func(string) error) error {
	toks := strings.Split(subject, ".")
	for i, t := range toks {
		switch {
		case t == "*" || t == ">":
			if i == 0 {
				return bad("its first token is a wildcard; start the pattern with a literal token, e.g. 'orders.>'")
			}
			if t == ">" && i != len(toks)-1 {
				return bad("> stands for the rest of the subject, so it must be the last token")
			}
		case strings.ContainsAny(t, "*>"):
			return bad(fmt.Sprintf("token %q mixes a wildcard with other characters; * and > must be whole tokens", t))
		}
	}
	return nil
}

// clipSubject keeps error messages short for very long subjects.
func clipSubject(s string) string {
	if len(s) > maxSubjectLen+8 {
		return s[:64] + "..."
	}
	return s
}
