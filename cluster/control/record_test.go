package control

import (
	"reflect"
	"strings"
	"testing"
)

func TestRecordsRoundTrip(t *testing.T) {
	for _, r := range []Record{
		{Kind: KindBarrier, Token: 7, Epoch: 3, Cuts: map[string]uint64{"orders": 12, "streamdb.table.t": 4}, Checkpoint: true},
		{Kind: KindBarrier, Token: 7, Epoch: 4, Cuts: map[string]uint64{}},
		{Kind: KindCommit, Token: 7, Epoch: 4, Committed: 3, BarrierSeq: 9},
		{Kind: KindCheckpoint, Token: 7, ID: 2, Epoch: 3, Digest: "ab12"},
		{Kind: KindRestore, Token: 8, ID: 2},
		{Kind: KindPlacement, Token: 8, Version: 5},
	} {
		data, err := Encode(r)
		if err != nil {
			t.Fatalf("Encode(%+v): %v", r, err)
		}
		got, err := Decode(data)
		if err != nil {
			t.Fatalf("Decode(%s): %v", data, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("Decode(Encode(%+v)) = %+v (%s)", r, got, data)
		}
	}
}

// Decoding is strict: a server never acts on a record it does not fully
// understand, and never skips one.
func TestRecordsDecodeStrictly(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{`{"v":1,"kind":"rebalance","token":1}`, `unknown kind "rebalance"`},
		{`{"v":2,"kind":"restore","token":1,"id":3}`, `format version 2`},
		{`{"kind":"restore","token":1,"id":3}`, `format version 0`},
		{`{"v":1,"kind":"restore","token":1,"id":3,"reason":"x"}`, `unknown field "reason"`},
		{`{"v":1,"kind":"restore","token":1,"id":3,"epoch":4}`, `a restore record has no "epoch"`},
		{`{"v":1,"kind":"barrier","token":1,"epoch":4,"checkpoint":false}`, `a barrier record needs "cuts"`},
		{`{"v":1,"kind":"barrier","token":1,"epoch":4,"cuts":null,"checkpoint":false}`, `a barrier record needs "cuts"`},
		{`{"v":1,"kind":"barrier","token":1,"epoch":0,"cuts":{},"checkpoint":false}`, `epoch starts at 1`},
		{`{"v":1,"kind":"barrier","token":1,"epoch":4,"cuts":{"s":-1},"checkpoint":false}`, `cannot unmarshal`},
		{`{"v":1,"kind":"commit","token":1,"epoch":4,"committed":5,"barrier_seq":2}`, `committed (5) <= epoch (4)`},
		{`{"v":1,"kind":"checkpoint","token":1,"id":1,"epoch":4,"digest":""}`, `manifest digest`},
		{`{"v":1,"kind":"placement","token":1,"version":1} {}`, `data after the record`},
		{`{"v":1,"kind":"placement","token":1,"version":1,"version":2}`, ``}, // JSON's last-wins duplicate is accepted
		{`[1]`, `cannot unmarshal array`},
		{``, `EOF`},
	} {
		_, err := Decode([]byte(c.data))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Decode(%s): %v", c.data, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Decode(%s) = %v; want an error with %q", c.data, err, c.want)
		}
	}
	if _, err := Encode(Record{Kind: "rebalance"}); err == nil {
		t.Error("Encode of an unknown kind succeeded")
	}
	if _, err := Encode(Record{Kind: KindBarrier}); err == nil {
		t.Error("Encode of a barrier of epoch 0 succeeded")
	}
}

func TestMinCuts(t *testing.T) {
	for _, c := range []struct {
		name    string
		prev    map[string]uint64
		reports []Report
		want    map[string]uint64
	}{
		{"first epoch, one reader", nil, []Report{{"a": 5}}, map[string]uint64{"a": 5}},
		{"the slowest reader of each source",
			nil, []Report{{"a": 5, "b": 9}, {"a": 3}, {"b": 11, "c": 1}},
			map[string]uint64{"a": 3, "b": 9, "c": 1}},
		{"never behind the previous cut", map[string]uint64{"a": 6}, []Report{{"a": 4}, {"a": 8}}, map[string]uint64{"a": 6}},
		{"moves on with every reader", map[string]uint64{"a": 6}, []Report{{"a": 7}, {"a": 8}}, map[string]uint64{"a": 7}},
		{"a source nobody reports keeps its cut", map[string]uint64{"a": 6, "gone": 2}, []Report{{"a": 7}}, map[string]uint64{"a": 7, "gone": 2}},
		{"no readers", map[string]uint64{"a": 6}, nil, map[string]uint64{"a": 6}},
		{"nothing at all", nil, nil, map[string]uint64{}},
		{"a reader at the start", nil, []Report{{"a": 0}, {"a": 10}}, map[string]uint64{"a": 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			prev := map[string]uint64{}
			for k, v := range c.prev {
				prev[k] = v
			}
			got := MinCuts(c.prev, c.reports)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("MinCuts(%v, %v) = %v; want %v", c.prev, c.reports, got, c.want)
			}
			if c.prev != nil && !reflect.DeepEqual(prev, c.prev) {
				t.Fatalf("MinCuts changed prev to %v", c.prev)
			}
		})
	}
}

func TestValidateCluster(t *testing.T) {
	for _, ok := range []string{"a", "east-1", "prod_eu", strings.Repeat("x", 48)} {
		if err := ValidateCluster(ok); err != nil {
			t.Errorf("ValidateCluster(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a.b", "a b", "a*", "a>", "é", strings.Repeat("x", 49)} {
		if err := ValidateCluster(bad); err == nil || !strings.Contains(err.Error(), "use 1 to 48 letters, digits, '-' or '_'") {
			t.Errorf("ValidateCluster(%q) = %v; want the rule", bad, err)
		}
	}
}
