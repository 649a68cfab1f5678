package front

import (
	"strings"

	"streamdb/sqlerr"
	"streamdb/types"
)

// typeName is a type as written in a cast or a column definition.
type typeName struct {
	// Text is the normalised name: the PostgreSQL name of a type that
	// types.Parse knows ("bigint", "timestamp with time zone"), with a
	// length or precision where it matters ("character varying(20)",
	// "numeric(10,2)"); otherwise the lower-cased name as written without a
	// pg_catalog. prefix.
	Text string
	// Type is the streamdb type, and Known whether types.Parse knew it.
	Type  types.Type
	Known bool
	first token // where the name starts, for errors
}

// multiword type names: a first word and the words that may follow it.
var typeTails = map[string][][]string{
	"double":    {{"precision"}},
	"character": {{"varying"}},
	"char":      {{"varying"}},
	"national":  {{"character", "varying"}, {"character"}, {"char", "varying"}, {"char"}},
	"bit":       {{"varying"}},
}

// readTypeName reads a type name at toks[i] and returns it with the index
// of the token after it.
func readTypeName(src string, toks []token, i int) (typeName, int, error) {
	at := func(k int) token {
		if k < len(toks) {
			return toks[k]
		}
		return eofToken(src)
	}
	first := at(i)
	if !first.isName() {
		return typeName{}, i, syntaxError(src, first)
	}
	// Qualified names: keep the last part; pg_catalog is the default schema.
	var schema []string
	for at(i+1).isOp(".") && (at(i+2).kind == tkWord || at(i+2).kind == tkIdent) {
		schema = append(schema, at(i).val)
		i += 2
	}
	words := []string{at(i).val}
	head := at(i)
	i++
	if head.kind == tkWord {
		for _, tail := range typeTails[head.val] {
			if matchWords(toks, i, tail) {
				words = append(words, tail...)
				i += len(tail)
				break
			}
		}
	}
	var args []string
	if at(i).isOp("(") {
		end := matchParen(toks, i)
		if end < 0 {
			return typeName{}, i, syntaxError(src, eofToken(src))
		}
		for _, part := range splitTopLevel(toks[i+1 : end]) {
			arg, err := typeModifierArg(src, part, toks[end])
			if err != nil {
				return typeName{}, i, err
			}
			args = append(args, arg)
		}
		i = end + 1
	}
	if head.isWord("timestamp", "time") {
		switch {
		case matchWords(toks, i, []string{"with", "time", "zone"}):
			words = append(words, "with", "time", "zone")
			i += 3
		case matchWords(toks, i, []string{"without", "time", "zone"}):
			words = append(words, "without", "time", "zone")
			i += 3
		}
	}
	array := false
	for at(i).isOp("[") {
		// elem[] and elem[n]: PostgreSQL ignores declared sizes and
		// dimensions, so int[3][] is int[].
		k := i + 1
		if at(k).kind == tkNumber {
			k++
		}
		if !at(k).isOp("]") {
			return typeName{}, i, syntaxError(src, at(k))
		}
		array, i = true, k+1
	}
	tn := typeName{first: first}
	name := strings.Join(words, " ")
	if array {
		name += argText(args) + "[]"
		args = nil
	}
	if len(schema) > 0 && !(len(schema) == 1 && schema[0] == "pg_catalog") {
		name = strings.Join(schema, ".") + "." + name
	}
	t, err := types.Parse(name)
	if err != nil {
		tn.Text = name + argText(args)
		return tn, i, nil
	}
	tn.Type, tn.Known = t, true
	tn.Text = t.String()
	if f := types.FixedTypeName(name); f != "" && !t.IsArray() {
		tn.Text = f // character(n) is not character varying(n)
	}
	if t == types.Varchar || t == types.Numeric || t.IsTimeOfDay() || t.IsTime() {
		tn.Text += argText(args) // time's precision too: "timestamp with time zone(3)"
	}
	return tn, i, nil
}

// typeModifierArg reads one number of a type modifier: an integer, or a
// negated one, as PostgreSQL's grammar folds a minus into the constant
// (numeric(3, -2) has a negative scale and rounds to hundreds; a plus is
// refused there too). Which numbers a type takes is
// types.ParseWithModifier's to say. end is the closing parenthesis, where
// an empty argument is reported.
func typeModifierArg(src string, part []token, end token) (string, error) {
	if len(part) == 0 {
		return "", syntaxError(src, end)
	}
	sign := ""
	if part[0].isOp("-") && len(part) == 2 {
		sign, part = "-", part[1:]
	}
	switch {
	case len(part) == 1 && part[0].kind == tkNumber:
		return sign + part[0].val, nil
	case len(part) == 1:
		return "", syntaxError(src, part[0])
	}
	return "", errorAt(src, part[0], sqlerr.SyntaxError, "type modifiers must be simple constants or identifiers")
}

func argText(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return "(" + strings.Join(args, ",") + ")"
}

// matchWords reports whether toks[i:] starts with the given unquoted words.
func matchWords(toks []token, i int, words []string) bool {
	if i+len(words) > len(toks) {
		return false
	}
	for k, w := range words {
		if !toks[i+k].isWord(w) {
			return false
		}
	}
	return true
}

// unknownType is the error for a type name types.Parse does not know.
func unknownType(src string, tn typeName) error {
	return errorAt(src, tn.first, sqlerr.UndefinedObject, "type \"%s\" does not exist", tn.Text)
}
