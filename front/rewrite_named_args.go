package front

import "streamdb/sqlerr"

// namedParams are the parameter names, in order, of the functions whose
// arguments may be given by name (name => value); an omitted one is 0,
// its default.
var namedParams = map[string][]string{
	"make_interval":          {"years", "months", "weeks", "days", "hours", "mins", "secs"},
	"jsonb_path_exists":      jsonPathParams,
	"jsonb_path_match":       jsonPathParams,
	"jsonb_path_query":       jsonPathParams,
	"jsonb_path_query_array": jsonPathParams,
	"jsonb_path_query_first": jsonPathParams,
}

// jsonPathParams are the parameters of the jsonb_path_* functions.
var jsonPathParams = []string{"target", "path", "vars", "silent"}

// namedDefaults are the defaults of the parameters that are not 0, by
// function: a string constant, or a word for a keyword default.
var namedDefaults = map[string][]token{
	"jsonb_path_exists":      jsonPathDefaults,
	"jsonb_path_match":       jsonPathDefaults,
	"jsonb_path_query":       jsonPathDefaults,
	"jsonb_path_query_array": jsonPathDefaults,
	"jsonb_path_query_first": jsonPathDefaults,
}

var jsonPathDefaults = []token{{}, {}, {kind: tkString, val: "{}"}, {kind: tkWord, val: "false"}}

// namedArgsPass rewrites a call with named arguments into a positional one,
// which is all the TiDB parser reads:
//
//	make_interval(days => 2, hours => 3)  ->  make_interval(0, 0, 0, 2, 3)
//
// Named arguments of other functions are refused with 42883, as
// PostgreSQL refuses names a function does not have.
func (r *rewriter) namedArgsPass() error {
	if !hasOp(r.toks, "=>") {
		return nil
	}
	// Innermost calls first: an argument may itself be a call with names.
	for changed := true; changed; {
		changed = false
		for i := len(r.toks) - 1; i >= 0; i-- {
			t := r.toks[i]
			if !t.isOp("(") || i == 0 {
				continue
			}
			end := matchParen(r.toks, i)
			if end < 0 {
				return syntaxError(r.src, eofToken(r.src))
			}
			args := splitTopLevel(r.toks[i+1 : end])
			named := false
			for _, a := range args {
				named = named || len(a) >= 2 && a[1].isOp("=>")
			}
			if !named {
				continue
			}
			if err := r.spend(end-i, t); err != nil {
				return err
			}
			fn := r.toks[i-1]
			params, ok := namedParams[fn.val]
			if fn.kind != tkWord || !ok {
				return errorAt(r.src, fn, sqlerr.UndefinedFunction, "function %s does not exist", fn.val).
					WithHint("Named arguments (name => value) are supported for make_interval and the jsonb_path_ functions only.")
			}
			call, err := r.positional(fn, params, args)
			if err != nil {
				return err
			}
			r.toks = concat(r.toks[:i+1], call, r.toks[end:])
			changed = true
			break
		}
	}
	return nil
}

// positional orders the arguments args of fn by params, positional ones
// first, with 0 for the parameters not given.
func (r *rewriter) positional(fn token, params []string, args [][]token) ([]token, error) {
	vals := make([][]token, len(params))
	last, seenNamed := -1, false
	for k, a := range args {
		pos := k
		if len(a) >= 2 && a[1].isOp("=>") {
			seenNamed = true
			pos = -1
			for j, p := range params {
				if a[0].kind == tkWord && a[0].val == p {
					pos = j
				}
			}
			if pos < 0 {
				return nil, errorAt(r.src, a[0], sqlerr.UndefinedFunction, "function %s has no parameter named %s", fn.val, a[0].val).
					WithHint("Its parameters are %v.", params)
			}
			a = a[2:]
		} else if seenNamed && len(a) > 0 {
			return nil, errorAt(r.src, a[0], sqlerr.SyntaxError, "positional argument cannot follow named argument")
		}
		if pos >= len(params) || len(a) == 0 {
			return nil, syntaxError(r.src, fn)
		}
		if vals[pos] != nil {
			return nil, errorAt(r.src, fn, sqlerr.SyntaxError, "argument name %q used more than once", params[pos])
		}
		vals[pos], last = a, max(last, pos)
	}
	var out []token
	for j := 0; j <= last; j++ {
		if j > 0 {
			out = append(out, synth(tkOp, ",", fn, false))
		}
		if vals[j] == nil {
			if d := namedDefaults[fn.val]; j < len(d) && d[j].kind != tkEOF {
				out = append(out, synth(d[j].kind, d[j].val, fn, j > 0))
				continue
			}
			out = append(out, synth(tkNumber, "0", fn, j > 0))
			continue
		}
		out = append(out, vals[j]...)
	}
	return out, nil
}
