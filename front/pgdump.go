package front

import "strings"

// matchPgDumpQuery recognises pg_dump's probe for the server setting
// restrict_nonsystem_relation_kind (pg_dump 15.8 and later set it through
// set_config over pg_settings when the server has it). streamdb has no such
// setting, so, as on a PostgreSQL server without it, the answer has no
// rows.
func matchPgDumpQuery(q *CatalogQuery, head, body string) *CatalogQuery {
	if strings.HasPrefix(head, "set_config ( name ,") &&
		body == "from pg_settings where name = 'restrict_nonsystem_relation_kind'" {
		q.Shape = CatalogNothing
		q.Items = []string{"set_config"}
		return q
	}
	return nil
}
