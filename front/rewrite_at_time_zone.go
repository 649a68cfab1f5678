package front

// atTimeZonePass rewrites PostgreSQL's AT TIME ZONE operator into the
// function PostgreSQL itself reads it as:
//
//	x AT TIME ZONE z  ->  timezone(z, x)
//
// AT binds tighter than every binary operator but looser than ::,
// subscripts and COLLATE, and is left-associative, so its left operand
// is the primary just emitted (a chain's earlier timezone call is one)
// and its right operand the primary after ZONE. It runs after the casts
// and typed literals have become primaries.
func (r *rewriter) atTimeZonePass() error {
	if !hasWord(r.toks, "at") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+4)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		if !t.isWord("at") || !matchWords(r.toks, i+1, []string{"time", "zone"}) {
			out = append(out, t)
			continue
		}
		start := primaryStart(out, len(out)-1)
		if start < 0 {
			return syntaxError(r.src, t)
		}
		zone := i + 3
		end := primaryEnd(r.toks, zone)
		if end < 0 {
			return syntaxError(r.src, tokenOrEOF(r.src, r.toks, zone))
		}
		if err := r.spend(len(out)-start+end-i, t); err != nil {
			return err
		}
		left := append([]token(nil), out[start:]...)
		space := out[start].space
		call := []token{synth(tkWord, "timezone", t, space), synth(tkOp, "(", t, false)}
		call = append(call, withSpace(r.toks[zone:end], false)...)
		call = append(call, synth(tkOp, ",", t, false))
		call = append(call, withSpace(left, true)...)
		call = append(call, synth(tkOp, ")", t, false))
		out = append(out[:start], call...)
		i = end - 1
	}
	r.toks = out
	return nil
}
