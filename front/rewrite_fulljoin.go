package front

import "strings"

// joinWords are the words that start a join.
var joinWords = setOf("join", "left", "right", "inner", "full", "cross",
	"natural", "outer", "straight_join")

// onStop are the words that end a join's ON condition.
var onStop = setOf("join", "left", "right", "inner", "full", "cross",
	"natural", "straight_join", "where", "group", "having", "order", "limit",
	"offset", "union", "intersect", "except", "window", "returning", "for",
	"fetch", "on", "using")

// fullJoinPass rewrites a FULL [OUTER] JOIN b ON cond into
// a LEFT JOIN b ON streamdb_full_join() AND (cond). The TiDB parser has no
// full outer join (it reads "a FULL JOIN b" as a table aliased "full"); the
// binder recognises the marker as the first conjunct of ON.
//
// It makes one pass: the marker goes in after ON and the ')' after the
// condition, which are scanned like the rest (they may hold other joins).
func (r *rewriter) fullJoinPass() error {
	if !hasWord(r.toks, "full") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+16)
	var inserts pending
	for i := 0; i < len(r.toks); i++ {
		out = inserts.flush(out, i)
		full := r.toks[i]
		join := i + 1
		if join < len(r.toks) && r.toks[join].isWord("outer") {
			join++
		}
		if !full.isWord("full") || join >= len(r.toks) || !r.toks[join].isWord("join") {
			out = append(out, full)
			continue
		}
		on := findOn(r.toks, join+1)
		natural := i > 0 && r.toks[i-1].isWord("natural")
		using := on < len(r.toks) && r.toks[on].isWord("using") && on+1 < len(r.toks) && r.toks[on+1].isOp("(")
		if natural || using {
			// a NATURAL FULL JOIN b and a FULL JOIN b USING (x) become
			// a LEFT JOIN b ON streamdb_full_join() AND streamdb_natural()
			// and ... AND streamdb_using(x).
			at := full
			if natural {
				if on < len(r.toks) && r.toks[on].isWord("on", "using") {
					return syntaxError(r.src, r.toks[on])
				}
				at = out[len(out)-1]
				out = out[:len(out)-1]
			}
			marker := []token{
				synth(tkWord, "on", at, true),
				synth(tkWord, FullJoinFunc, at, true),
				synth(tkOp, "(", at, false),
				synth(tkOp, ")", at, false),
				synth(tkWord, "and", at, true),
			}
			if natural {
				marker = append(marker, synth(tkWord, NaturalJoinFunc, at, true), synth(tkOp, "(", at, false), synth(tkOp, ")", at, false))
			} else {
				r.toks[on] = synth(tkWord, UsingJoinFunc, r.toks[on], true)
				r.toks[on+1].space = false
			}
			inserts.add(on, marker...)
			out = append(out, synth(tkWord, "left", at, at.space))
			i = join - 1
			continue
		}
		if on >= len(r.toks) || !r.toks[on].isWord("on") {
			return syntaxError(r.src, tokenOrEOF(r.src, r.toks, on))
		}
		end := onConditionEnd(r.toks, on+1)
		if end == on+1 {
			return syntaxError(r.src, tokenOrEOF(r.src, r.toks, end))
		}
		onTok := r.toks[on]
		inserts.add(end, synth(tkOp, ")", onTok, false))
		inserts.add(on+1,
			synth(tkWord, FullJoinFunc, full, true),
			synth(tkOp, "(", full, false),
			synth(tkOp, ")", full, false),
			synth(tkWord, "and", onTok, true),
			synth(tkOp, "(", onTok, true),
		)
		r.toks[on+1].space = false
		out = append(out, synth(tkWord, "left", full, full.space))
		i = join - 1
	}
	r.toks = inserts.flush(out, len(r.toks))
	return nil
}

// findOn returns the index of the ON (or USING, or whatever ends the search)
// of the join whose right side starts at toks[i], or len(toks).
func findOn(toks []token, i int) int {
	for j := i; j < len(toks); j++ {
		t := toks[j]
		switch {
		case t.isOp("("):
			if j = matchParen(toks, j); j < 0 {
				return len(toks)
			}
		case t.isOp(")", ",", ";"), t.kind == tkWord && onStop[t.val]:
			return j
		}
	}
	return len(toks)
}

// onConditionEnd returns the index just past the ON condition that starts
// at toks[i].
func onConditionEnd(toks []token, i int) int {
	for j := i; j < len(toks); j++ {
		t := toks[j]
		switch {
		case t.isOp("("):
			if j = matchParen(toks, j); j < 0 {
				return len(toks)
			}
		case t.isWord("case"):
			if j = matchCase(toks, j); j < 0 {
				return len(toks)
			}
		case t.isOp(")", ",", ";"), t.kind == tkWord && onStop[t.val]:
			return j
		}
	}
	return len(toks)
}

func upper(s string) string { return strings.ToUpper(s) }
