package expr

import "strings"

// quotedKeywords are PostgreSQL 15's key words that are not unreserved
// (reserved, column-name and type/function-name key words): quote_ident
// quotes them, as a bare one would not read as a name.
var quotedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric both case cast
		check collate column constraint create current_catalog current_date current_role current_time
		current_timestamp current_user default deferrable desc distinct do else end except false fetch for
		foreign from grant group having in initially intersect into lateral leading limit localtime
		localtimestamp not null offset on only or order placing primary references returning select
		session_user some symmetric table then to trailing true union unique user using variadic when
		where window with
		between bigint bit boolean char character coalesce dec decimal exists extract float greatest
		grouping inout int integer interval least national nchar none normalize nullif numeric out
		overlay position precision real row setof smallint substring time timestamp treat trim values
		varchar xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi
		xmlroot xmlserialize xmltable
		authorization binary collation concurrently cross current_schema freeze full ilike inner is
		isnull join left like natural notnull outer overlaps right similar tablesample verbose`) {
		m[w] = true
	}
	return m
}()

// QuoteIdent quotes name as PostgreSQL's quote_ident does: unless it is
// lower-case letters, digits and underscores (not starting with a digit)
// and no key word that needs quoting.
func QuoteIdent(name string) string {
	plain := name != "" && !quotedKeywords[name]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			plain = false
		}
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
