package front

import (
	"fmt"
	"unicode/utf8"
)

// MaxIdentifierBytes is PostgreSQL's longest identifier (NAMEDATALEN - 1).
// A longer one, quoted or not, is cut to it, at a character boundary,
// wherever it is written, so that a name written in full at CREATE and
// again in a later statement names the same object.
const MaxIdentifierBytes = 63

// truncateIdentifiers cuts the identifiers among toks that are longer
// than MaxIdentifierBytes and returns PostgreSQL's NOTICE (SQLSTATE
// 42622) for each, in the order they are written. A keyword is never
// that long, so every such word is an identifier.
func truncateIdentifiers(toks []token) []string {
	var notices []string
	for i, t := range toks {
		if t.kind != tkWord && t.kind != tkIdent || len(t.val) <= MaxIdentifierBytes {
			continue
		}
		cut := MaxIdentifierBytes
		for cut > 0 && !utf8.RuneStart(t.val[cut]) {
			cut--
		}
		notices = append(notices, fmt.Sprintf(`identifier "%s" will be truncated to "%s"`, t.val, t.val[:cut]))
		toks[i].val = t.val[:cut]
	}
	return notices
}
