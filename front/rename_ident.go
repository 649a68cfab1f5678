package front

import "strings"

// RenameColumnRefs returns expression text (a stored CHECK) with every
// reference to column from written as to instead: each identifier equal
// to from that is not a function name (followed by "("), a type name
// (after "::") or a qualifier (followed by "."). The rest of the text is
// kept byte for byte. It reports whether any reference was renamed.
func RenameColumnRefs(text, from, to string) (string, bool, error) {
	toks, err := lex(text)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	last := 0
	renamed := false
	for i, t := range toks {
		if (t.kind != tkWord && t.kind != tkIdent) || t.val != from {
			continue
		}
		if i > 0 && toks[i-1].isOp("::") {
			continue
		}
		if i+1 < len(toks) && toks[i+1].isOp("(", ".") {
			continue
		}
		b.WriteString(text[last:t.pos])
		b.WriteString(quoteIdent(to))
		last = t.end
		renamed = true
	}
	b.WriteString(text[last:])
	return b.String(), renamed, nil
}
