package plan

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// recordCatalog is a lookup over the objects of the given scans.
func recordCatalog(scans ...*Scan) func(string) (*catalog.Descriptor, bool) {
	return func(name string) (*catalog.Descriptor, bool) {
		for _, s := range scans {
			if s.Object.Name == name {
				return s.Object, true
			}
		}
		return nil, false
	}
}

// aggOver is SELECT k, sum(v) [, extra...] FROM s GROUP BY k.
func aggOver(t *testing.T, s *Scan, extra ...expr.Expr) Node {
	agg := &Aggregate{Input: s, GroupBy: []expr.Expr{col(s, 0)},
		Aggs: []AggCall{{Func: "sum", Arg: col(s, 1), T: types.Numeric}},
		Cols: []types.Column{{Name: "k", Type: types.Int8}, {Name: "sum", Type: types.Numeric}}}
	exprs := append([]expr.Expr{col(agg, 0), col(agg, 1)}, extra...)
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "total", Type: types.Numeric}}
	for range extra {
		cols = append(cols, types.Column{Name: "x", Type: types.Int8})
	}
	return &Project{Input: agg, Exprs: exprs, Cols: cols}
}

// ids returns the operator ids of a record by op, in record order.
func ids(t *testing.T, data []byte) map[string][]string {
	t.Helper()
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	var walk func(*nodeRec)
	walk = func(r *nodeRec) {
		if r.Ref != nil {
			return
		}
		out[r.Op] = append(out[r.Op], r.ID)
		for _, in := range r.In {
			walk(in)
		}
	}
	walk(rec.Root)
	return out
}

// An aggregate keeps its operator id when a column is added to the
// projection above it; the projection's id changes.
func TestOperatorIDsStable(t *testing.T) {
	s := testScan("ev", "k", "v")
	one, err := Encode(aggOver(t, s), recordCatalog(s))
	if err != nil {
		t.Fatal(err)
	}
	two, err := Encode(aggOver(t, s, &expr.Const{D: types.NewInt(7), T: types.Int8}), recordCatalog(s))
	if err != nil {
		t.Fatal(err)
	}
	a, b := ids(t, one), ids(t, two)
	if a["aggregate"][0] != b["aggregate"][0] || a["scan"][0] != b["scan"][0] {
		t.Errorf("the aggregate or scan id changed with the projection above: %v, %v", a, b)
	}
	if a["project"][0] == b["project"][0] {
		t.Errorf("the projection kept its id %s though it changed", a["project"][0])
	}
	if !strings.HasPrefix(a["aggregate"][0], "aggregate-") {
		t.Errorf("aggregate id %q", a["aggregate"][0])
	}
}

// A subtree used twice is recorded once and read back shared; equal
// subtrees that are distinct nodes get distinct ids.
func TestRecordSharedAndEqualNodes(t *testing.T) {
	s := testScan("ev", "k", "v")
	f := &Filter{Input: s, Cond: mustBinary(t, ">", col(s, 1), &expr.Const{D: types.NewInt(5), T: types.Int8})}
	u := &Union{Inputs: []Node{f, f}, Cols: s.Cols}
	data, err := Encode(u, recordCatalog(s))
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data, recordCatalog(s))
	if err != nil {
		t.Fatal(err)
	}
	bu := back.(*Union)
	if bu.Inputs[0] != bu.Inputs[1] {
		t.Error("a shared input read back as two nodes")
	}
	f2 := &Filter{Input: testScan("ev", "k", "v"), Cond: f.Cond}
	f2.Input.(*Scan).Object = s.Object
	data, err = Encode(&Union{Inputs: []Node{f, f2}, Cols: s.Cols}, recordCatalog(s))
	if err != nil {
		t.Fatal(err)
	}
	got := ids(t, data)["filter"]
	if len(got) != 2 || got[0] == got[1] || got[1] != got[0]+"#2" {
		t.Errorf("equal filters got ids %v, want distinct, the second with #2", got)
	}
}

// A record of a version this binary does not read is refused with 0A000;
// one that names a missing object or an unknown call does not read.
func TestDecodeRefuses(t *testing.T) {
	s := testScan("ev", "k", "v")
	data, err := Encode(aggOver(t, s), recordCatalog(s))
	if err != nil {
		t.Fatal(err)
	}
	newer := strings.Replace(string(data), `"version":1`, `"version":2`, 1)
	_, err = Decode([]byte(newer), recordCatalog(s))
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.FeatureNotSupported || se.Hint == "" {
		t.Errorf("version 2: %v, want 0A000 with a hint", err)
	}
	if _, err := Decode(data, recordCatalog()); err == nil {
		t.Error("a record over a missing stream read back")
	}
	unknown := strings.Replace(string(data), `"op":"scan"`, `"op":"teleport"`, 1)
	if _, err := Decode([]byte(unknown), recordCatalog(s)); err == nil {
		t.Error("a record with an unknown node read back")
	}
	f := &Filter{Input: s, Cond: &expr.Func{Name: "no_such_function", Args: []expr.Expr{col(s, 0)}, T: types.Bool}}
	if _, err := Encode(f, recordCatalog(s)); err == nil {
		t.Error("a call that cannot be rebuilt was recorded")
	}
}

// sameAs compares every field, so a field the record would not carry
// shows as a difference, with its path.
func TestSameAsComparesEveryField(t *testing.T) {
	s := testScan("ev", "k", "v")
	a, b := aggOver(t, s).(*Project), aggOver(t, s).(*Project)
	if err := sameAs(reflect.ValueOf(Node(a)), reflect.ValueOf(Node(b)), "plan"); err != nil {
		t.Fatalf("equal plans: %v", err)
	}
	b.Input.(*Aggregate).Aggs[0].Distinct = true
	err := sameAs(reflect.ValueOf(Node(a)), reflect.ValueOf(Node(b)), "plan")
	if err == nil || !strings.Contains(err.Error(), "Aggs[0].Distinct") {
		t.Errorf("a changed flag: %v, want its path", err)
	}
}

// Every kind of value a constant may hold is recorded and read back as
// it was: time and timetz (with its zone) included.
func TestDatumRecordRoundTrip(t *testing.T) {
	for _, d := range []types.Datum{
		types.NewTimeOfDay(types.UsecsPerDay), types.NewTimeTZ(45296789000, -7200),
		types.NewInterval(1, 2, 3), types.NewBytes("\x00\xff"), types.NewTimestamp2000(-1), types.NewDate(7),
	} {
		r, err := encodeDatum(d)
		if err != nil {
			t.Fatalf("%+v: %v", d, err)
		}
		got, err := decodeDatum(r)
		if err != nil || got.K != d.K || types.Compare(got, d) != 0 || got.Zone() != d.Zone() {
			t.Errorf("%+v read back as %+v (%v)", d, got, err)
		}
	}
}

// A timestamp constant is recorded as microseconds since 1970 (kind
// "timestamp"), as records were written before datums counted from
// 2000, and as the datum's own (kind "timestamp2000") where that form
// ends; both read back exactly.
func TestTimestampRecordForms(t *testing.T) {
	for _, c := range []struct {
		text, kind string
		i          int64
	}{
		{"1970-01-01 00:00:00", "timestamp", 0},
		{"2000-01-01 00:00:00", "timestamp", 946684800000000},
		{"294246-12-31 23:59:59.999999", "timestamp", 9223371244799999999},
		{"infinity", "timestamp", math.MaxInt64},
		{"294247-01-01 00:00:00", "timestamp2000", 9222424560000000000},
		{"294276-12-31 23:59:59.999999", "timestamp2000", 9223371331199999999},
	} {
		d, err := types.ParseText(c.text, types.Timestamp)
		if err != nil {
			t.Fatal(err)
		}
		r, err := encodeDatum(d)
		if err != nil || r.Kind != c.kind || r.I != c.i {
			t.Errorf("%s recorded as %+v (%v), want kind %s, i %d", c.text, r, err, c.kind, c.i)
			continue
		}
		got, err := decodeDatum(r)
		if err != nil || got.K != types.KindTimestamp || got.I != d.I {
			t.Errorf("%s read back as %+v (%v)", c.text, got, err)
		}
	}
}
