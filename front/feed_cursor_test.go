package front

import "testing"

// TestFetchDirections: PostgreSQL's FETCH directions normalize to four.
func TestFetchDirections(t *testing.T) {
	for _, c := range []struct {
		sql   string
		dir   int
		count int64
		name  string
	}{
		{"FETCH c", FetchForward, 1, "c"},
		{"FETCH next", FetchForward, 1, "next"},
		{"FETCH NEXT FROM c", FetchForward, 1, "c"},
		{"FETCH 3 c", FetchForward, 3, "c"},
		{"FETCH -3 IN c", FetchBackward, 3, "c"},
		{"FETCH ALL c", FetchForward, -1, "c"},
		{"FETCH FORWARD c", FetchForward, 1, "c"},
		{"FETCH FORWARD -2 c", FetchBackward, 2, "c"},
		{"FETCH FORWARD ALL c", FetchForward, -1, "c"},
		{"FETCH BACKWARD c", FetchBackward, 1, "c"},
		{"FETCH BACKWARD 0 c", FetchBackward, 0, "c"},
		{"FETCH BACKWARD -4 c", FetchForward, 4, "c"},
		{"FETCH BACKWARD ALL FROM c", FetchBackward, -1, "c"},
		{"FETCH PRIOR c", FetchBackward, 1, "c"},
		{"FETCH FIRST c", FetchAbsolute, 1, "c"},
		{"FETCH LAST c", FetchAbsolute, -1, "c"},
		{"FETCH ABSOLUTE -2 c", FetchAbsolute, -2, "c"},
		{"FETCH RELATIVE +2 c", FetchRelative, 2, "c"},
		{"MOVE RELATIVE 0 IN c", FetchRelative, 0, "c"},
	} {
		st, err := Parse(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		f, ok := st.Node.(*Fetch)
		if !ok || f.Dir != c.dir || f.Count != c.count || f.Name != c.name {
			t.Errorf("%s: got %+v, want dir %d count %d name %s", c.sql, st.Node, c.dir, c.count, c.name)
		}
	}
	for _, bad := range []string{"FETCH ABSOLUTE c", "FETCH RELATIVE x c"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
