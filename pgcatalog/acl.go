package pgcatalog

import (
	"sort"
	"strings"

	"streamdb/types"
)

// aclLetters are the privileges' letters in an aclitem, in PostgreSQL's
// order (a INSERT, r SELECT, w UPDATE, d DELETE, D TRUNCATE, x REFERENCES,
// t TRIGGER, U USAGE).
var aclLetters = []struct{ priv, letter string }{
	{"INSERT", "a"}, {"SELECT", "r"}, {"UPDATE", "w"}, {"DELETE", "d"},
	{"TRUNCATE", "D"}, {"REFERENCES", "x"}, {"TRIGGER", "t"}, {"USAGE", "U"},
}

// objectGrants are an object's grants as relationACL lists them.
type objectGrants struct {
	byRole map[string][]string // privileges by role ("public" for PUBLIC)
	order  []string            // grantees in the order first granted
	set    bool                // a GRANT or REVOKE ran on the object
}

// relationACL is pg_class.relacl's elements for a relation owned by owner
// ("" is the bootstrap superuser), as PostgreSQL 15 lists them: the
// owner's default privileges first, then each grantee's (PUBLIC as an
// empty name) in the order they were first granted, all granted by the
// owner. nil until the first GRANT or REVOKE (NULL); once one ran, the
// owner's entry stays when every grant is revoked. Grantees the order
// does not know (a roles file from before it was kept) follow by name,
// PUBLIC last.
func relationACL(owner string, g objectGrants, sequence bool) []string {
	if !g.set && len(g.byRole) == 0 {
		return nil
	}
	if owner == "" {
		owner = BootstrapUser
	}
	ownerPrivs := "arwdDxt"
	if sequence {
		ownerPrivs = "rwU"
	}
	out := []string{aclName(owner) + "=" + ownerPrivs + "/" + aclName(owner)}
	roles := make([]string, 0, len(g.byRole))
	listed := map[string]bool{owner: true}
	for _, r := range g.order {
		if _, ok := g.byRole[r]; ok && !listed[r] {
			roles = append(roles, r)
			listed[r] = true
		}
	}
	var rest []string
	for r := range g.byRole {
		if !listed[r] {
			rest = append(rest, r)
		}
	}
	sort.Slice(rest, func(i, j int) bool {
		if (rest[i] == "public") != (rest[j] == "public") {
			return rest[j] == "public"
		}
		return rest[i] < rest[j]
	})
	for _, r := range append(roles, rest...) {
		held := map[string]bool{}
		for _, p := range g.byRole[r] {
			held[p] = true
		}
		var letters strings.Builder
		for _, l := range aclLetters {
			if held[l.priv] {
				letters.WriteString(l.letter)
			}
		}
		if letters.Len() == 0 {
			continue
		}
		grantee := aclName(r)
		if r == "public" {
			grantee = ""
		}
		out = append(out, grantee+"="+letters.String()+"/"+aclName(owner))
	}
	return out
}

// aclName is a role's name as an aclitem writes it: double-quoted when
// it holds anything but lower-case letters, digits and underscores.
func aclName(name string) string {
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
		}
	}
	return name
}

// ACLDefault is acldefault's text for an object owner owns with privs
// ("arwdDxt"): {owner=privs/owner}.
func ACLDefault(owner, privs string) string {
	return "{" + aclName(owner) + "=" + privs + "/" + aclName(owner) + "}"
}

// aclLines is psql's \dp "Access privileges": the elements one a line
// (array_to_string(relacl, E'\n')), NULL when nothing was granted.
func aclLines(acl []string) types.Datum {
	if acl == nil {
		return types.Null
	}
	return str(strings.Join(acl, "\n"))
}

// aclDatum is relacl's value: a text array of the elements, or NULL.
func aclDatum(acl []string) types.Datum {
	if acl == nil {
		return types.Null
	}
	return textArrayDatum(acl)
}
