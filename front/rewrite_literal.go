package front

import (
	"strings"
)

// intervalUnits are the field words that may follow INTERVAL '...'.
var intervalUnits = setOf("year", "month", "day", "hour", "minute", "second")

// literalPass rewrites typed literals: TIMESTAMP '...' and other
// "type 'string'" forms become streamdb_cast('...', 'type'), and INTERVAL
// literals become streamdb_interval('text').
func (r *rewriter) literalPass() error {
	out := make([]token, 0, len(r.toks))
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if t.kind != tkWord || i > 0 && r.toks[i-1].isOp("::", ".") {
			out = append(out, t)
			continue
		}
		if t.isWord("interval") && i+1 < len(r.toks) && r.toks[i+1].kind == tkString {
			text, next := intervalText(r.toks, i+1)
			out = append(out, callTokens(IntervalFunc, t, synth(tkString, text, r.toks[i+1], false))...)
			i = next - 1
			continue
		}
		if !typedLiteralHeads[t.val] {
			out = append(out, t)
			continue
		}
		tn, next, err := readTypeName(r.src, r.toks, i)
		if err != nil || !tn.Known || next >= len(r.toks) || r.toks[next].kind != tkString {
			out = append(out, t)
			continue
		}
		lit := r.toks[next]
		out = append(out, callTokens(CastFunc, t,
			synth(tkString, lit.val, lit, false),
			synth(tkOp, ",", lit, false),
			synth(tkString, tn.Text, t, true))...)
		i = next
	}
	r.toks = out
	return nil
}

// typedLiteralHeads are the words that may start "type 'string'".
var typedLiteralHeads = setOf("timestamp", "timestamptz", "date", "time", "timetz",
	"boolean", "bool", "smallint", "int2", "integer", "int", "int4", "bigint",
	"int8", "real", "float4", "float8", "float", "double", "numeric", "decimal",
	"text", "varchar", "character", "char", "uuid")

// intervalText reads the string at toks[i] and any field words after it
// (INTERVAL '10' SECOND, INTERVAL '1' DAY TO SECOND) and returns the interval
// text ("10 second") and the index after it.
func intervalText(toks []token, i int) (string, int) {
	text := strings.TrimSpace(toks[i].val)
	i++
	var units []string
	if i < len(toks) && toks[i].kind == tkWord && intervalUnits[toks[i].val] {
		units = append(units, toks[i].val)
		i++
		if i+1 < len(toks) && toks[i].isWord("to") && intervalUnits[toks[i+1].val] {
			units = append(units, "to", toks[i+1].val)
			i += 2
		}
	}
	if len(units) > 0 {
		text += " " + strings.Join(units, " ")
	}
	return text, i
}

// callTokens returns the tokens of fn(args...) placed at the position of at.
func callTokens(fn string, at token, args ...token) []token {
	out := []token{synth(tkWord, fn, at, at.space), synth(tkOp, "(", at, false)}
	out = append(out, args...)
	return append(out, synth(tkOp, ")", at, false))
}
