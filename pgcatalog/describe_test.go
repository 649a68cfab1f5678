package pgcatalog

import (
	"regexp"
	"strings"
	"testing"
)

// fieldsText renders describe rows as "item=value" lists of the items
// named, for comparing.
func fieldsText(rows []Fields, items ...string) []string {
	var out []string
	for _, r := range rows {
		var vals []string
		for _, it := range items {
			v, ok := r[it]
			if !ok {
				vals = append(vals, it+"=<none>")
				continue
			}
			vals = append(vals, it+"="+datumText(v))
		}
		out = append(out, strings.Join(vals, " "))
	}
	return out
}

func TestDescribeRelations(t *testing.T) {
	e := shopEngine()
	e.rels[1].Owner = "alice"
	e.seqs = []Sequence{{OID: FirstUserOID + 9, Name: "child_id_seq", Owner: BootstrapUser}}
	d := Describe{User: "bob"}
	got := fieldsText(d.Relations(e), "Name", "Type", "Owner")
	want := []string{
		"Name=child Type=table Owner=bob",
		"Name=child_id_seq Type=sequence Owner=bob",
		"Name=parent Type=table Owner=alice",
		"Name=totals Type=materialized view Owner=bob",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("\\d lists\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	d = Describe{RelKinds: []string{"i"}, Name: regexp.MustCompile("^child")}
	got = fieldsText(d.Relations(e), "Name", "Type", "Table")
	want = []string{"Name=child_at_idx Type=index Table=child", "Name=child_pkey Type=index Table=child"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("\\di child* lists\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDescribeIndexesAndKeys(t *testing.T) {
	e := shopEngine()
	d := Describe{OID: FirstUserOID + 1}
	got := fieldsText(d.Indexes(e), "relname", "indisprimary", "indisunique", "contype")
	contains(t, "\\d parent's indexes", got,
		"relname=parent_pkey indisprimary=t indisunique=t contype=p",
		"relname=parent_code_key indisprimary=f indisunique=t contype=u")
	got = fieldsText(d.Relation(e), "relchecks", "relhasindex", "relhastriggers")
	contains(t, "\\d parent's flags", got, "relchecks=1 relhasindex=t relhastriggers=t")
	d = Describe{Name: regexp.MustCompile("^child$")}
	got = fieldsText(d.JDBCIndexInfo(e), "index_name", "column_name", "non_unique", "asc_or_desc")
	want := []string{"index_name=child_pkey column_name=id non_unique=false asc_or_desc=A",
		"index_name=child_at_idx column_name=at non_unique=true asc_or_desc=D"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("getIndexInfo(child):\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = fieldsText(d.DjangoConstraints(e), "conname", "columns", "contype", "fk_target")
	contains(t, "Django's constraints of child", got,
		"conname=child_pkey columns={id} contype=p fk_target=<none>",
		"conname=child_pid_fkey columns={pid} contype=f fk_target=parent.id")
}
