package expr

// volatileFuncs answer differently from one call to the next, or from
// one day to the next, for the same arguments: a materialized view kept
// up to date change by change cannot hold their results exactly.
var volatileFuncs = map[string]bool{"random": true, "clock_timestamp": true, "now": true,
	"current_timestamp": true, "transaction_timestamp": true, "statement_timestamp": true,
	"localtimestamp": true, "gen_random_uuid": true}

// VolatileCall returns the name of the first function call in e whose
// result depends on when or how often it is called (random(), now() and
// its synonyms, clock_timestamp(), gen_random_uuid(), age() of one
// argument), or "".
func VolatileCall(e Expr) string {
	name := ""
	Visit(e, func(x Expr) {
		if f, ok := x.(*Func); ok && name == "" && (volatileFuncs[f.Name] || f.Name == "age" && len(f.Args) == 1) {
			name = f.Name
		}
	})
	return name
}
