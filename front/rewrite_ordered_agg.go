package front

import "strings"

// orderedAggPass rewrites the ordered forms of aggregates, which the TiDB
// parser does not read, into plain calls whose extra arguments the binder
// reads (sql/bind_ordered_agg.go):
//
//	percentile_cont(0.5) WITHIN GROUP (ORDER BY x DESC)
//	  ->  percentile_cont(x, 0.5, 'desc')
//	mode() WITHIN GROUP (ORDER BY x)       ->  streamdb_mode(x, 'asc')
//	string_agg(a, ',' ORDER BY k DESC)     ->  string_agg(a, ',', 'desc', k)
//	array_agg(a ORDER BY k DESC)           ->  array_agg(a, 'desc', k)
//	jsonb_agg(a ORDER BY k DESC)           ->  jsonb_agg(a, 'desc', k)
//	array_agg(a ORDER BY k NULLS FIRST, j DESC)
//	  ->  array_agg(a, 'asc nulls first,desc', k, j)
//	json_object_agg(k, v ORDER BY k)  ->  json_object_agg(k, v, 'asc', k)
func (r *rewriter) orderedAggPass() error {
	if !hasWord(r.toks, "within") && !hasWord(r.toks, "string_agg") && !hasWord(r.toks, "array_agg") && !hasWord(r.toks, "jsonb_agg") &&
		!hasWord(r.toks, "json_agg") && !hasWord(r.toks, "jsonb_object_agg") && !hasWord(r.toks, "json_object_agg") {
		return nil
	}
	out := make([]token, 0, len(r.toks)+8)
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		// name(args) WITHIN GROUP (ORDER BY x [ASC|DESC])
		if t.isWord("within") && i+2 < len(r.toks) && r.toks[i+1].isWord("group") && r.toks[i+2].isOp("(") && len(out) > 0 && out[len(out)-1].isOp(")") {
			open := matchParenBack(out, len(out)-1)
			end := matchParen(r.toks, i+2)
			if open < 1 || end < 0 || i+4 >= end || !r.toks[i+3].isWord("order") || !r.toks[i+4].isWord("by") {
				return syntaxError(r.src, t)
			}
			key, dir := orderKey(r.toks[i+5 : end])
			if len(key) == 0 {
				return syntaxError(r.src, r.toks[end])
			}
			args := out[open+1 : len(out)-1]
			closing := out[len(out)-1]
			call := append([]token(nil), out[:open+1]...)
			if n := open - 1; call[n].isWord("mode") {
				// MODE is a keyword to the TiDB parser.
				call[n] = synth(tkWord, ModeFunc, call[n], call[n].space)
			}
			call = append(call, withSpace(key, false)...)
			if len(args) > 0 {
				call = append(call, synth(tkOp, ",", t, false))
				call = append(call, withSpace(args, true)...)
			}
			call = append(call, synth(tkOp, ",", t, false), synth(tkString, dir, t, true), closing)
			out = call
			i = end
			continue
		}
		// string_agg(a, d ORDER BY k [ASC|DESC]), array_agg(a ORDER BY k)
		if t.isWord("string_agg", "array_agg", "jsonb_agg", "json_agg", "jsonb_object_agg", "json_object_agg") && i+1 < len(r.toks) && r.toks[i+1].isOp("(") {
			end := matchParen(r.toks, i+1)
			if end < 0 {
				return syntaxError(r.src, t)
			}
			inner := r.toks[i+2 : end]
			for j := 0; j+1 < len(inner); j++ {
				if inner[j].isOp("(") {
					if m := matchParen(inner, j); m > 0 {
						j = m
					}
					continue
				}
				if inner[j].isWord("order") && inner[j+1].isWord("by") {
					keys, spec := orderKeys(inner[j+2:])
					if keys == nil {
						return syntaxError(r.src, r.toks[end])
					}
					out = append(out, t, r.toks[i+1])
					out = append(out, inner[:j]...)
					if topLevelArgs(inner[:j]) != orderedAggArgs[strings.ToLower(t.val)] {
						// No such aggregate: the binder names it by the
						// arguments' types, as PostgreSQL does, without
						// the ORDER BY, which is not looked at then.
						out = append(out, r.toks[end])
						i = end
						break
					}
					out = append(out, synth(tkOp, ",", inner[j], false), synth(tkString, spec, inner[j], true))
					for _, key := range keys {
						out = append(out, synth(tkOp, ",", inner[j], false))
						out = append(out, withSpace(key, true)...)
					}
					out = append(out, r.toks[end])
					i = end
					break
				}
			}
			if i == end {
				continue
			}
		}
		out = append(out, t)
	}
	r.toks = out
	return nil
}

// orderedAggArgs is how many arguments, before ORDER BY, each aggregate
// with an ORDER BY in its call takes.
var orderedAggArgs = map[string]int{"string_agg": 2, "array_agg": 1, "jsonb_agg": 1, "json_agg": 1,
	"jsonb_object_agg": 2, "json_object_agg": 2}

// topLevelArgs counts the comma-separated arguments in toks, not those
// inside parentheses or brackets.
func topLevelArgs(toks []token) int {
	if len(toks) == 0 {
		return 0
	}
	n, depth := 1, 0
	for _, t := range toks {
		switch {
		case t.isOp("(", "["):
			depth++
		case t.isOp(")", "]"):
			depth--
		case depth == 0 && t.isOp(","):
			n++
		}
	}
	return n
}

// orderKeys splits the ORDER BY list of an aggregate, "k1 [ASC|DESC]
// [NULLS FIRST|LAST], ...", into its keys and their directions, spelled
// "asc" or "desc" and " nulls first" or " nulls last" when given, comma
// separated. keys is nil for an empty key.
func orderKeys(toks []token) (keys [][]token, spec string) {
	var dirs []string
	for _, item := range splitTopLevel(toks) {
		nulls := ""
		if n := len(item); n > 2 && item[n-2].isWord("nulls") && item[n-1].isWord("first", "last") {
			nulls = " nulls " + item[n-1].val
			item = item[:n-2]
		}
		key, dir := orderKey(item)
		if len(key) == 0 {
			return nil, ""
		}
		keys = append(keys, key)
		dirs = append(dirs, dir+nulls)
	}
	return keys, strings.Join(dirs, ",")
}

// orderKey splits "x [ASC|DESC]" into x and the direction.
func orderKey(toks []token) ([]token, string) {
	dir := "asc"
	if n := len(toks); n > 0 && toks[n-1].isWord("asc", "desc") {
		dir = toks[n-1].val
		toks = toks[:n-1]
	}
	return toks, dir
}
