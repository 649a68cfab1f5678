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

// relationACL is pg_class.relacl's elements for a relation owned by owner
// ("" is the bootstrap superuser) with grants: the owner's default
// privileges first, then each grantee's (PUBLIC as an empty name), all
// granted by the owner. nil when nothing was granted: PostgreSQL keeps
// NULL until the first GRANT. Grantees are listed by name, PUBLIC last
// (PostgreSQL lists them in the order they were first granted, which the
// role store does not keep).
func relationACL(owner string, grants map[string][]string, sequence bool) []string {
	if len(grants) == 0 {
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
	roles := make([]string, 0, len(grants))
	for r := range grants {
		if r != owner {
			roles = append(roles, r)
		}
	}
	sort.Slice(roles, func(i, j int) bool {
		if (roles[i] == "public") != (roles[j] == "public") {
			return roles[j] == "public"
		}
		return roles[i] < roles[j]
	})
	for _, r := range roles {
		held := map[string]bool{}
		for _, p := range grants[r] {
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
