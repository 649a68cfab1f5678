package meta

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/expr"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/tests/testutil"
	"streamdb/types"
)

// loadRecorder is a CatalogLoad that records what Load asks of it, in
// order, with a live catalog of its own.
type loadRecorder struct {
	live   map[string]*catalog.Descriptor
	events []string
}

func (r *loadRecorder) hooks() CatalogLoad {
	return CatalogLoad{
		Install: func(descs []*catalog.Descriptor) {
			r.live = map[string]*catalog.Descriptor{}
			names := ""
			for _, d := range descs {
				r.live[d.Name] = d
				names += " " + d.Name
			}
			r.events = append(r.events, "install"+names)
		},
		Update: func(d *catalog.Descriptor) {
			r.live[d.Name] = d
			r.events = append(r.events, "update "+d.Name)
		},
		Lookup: func(name string) (*catalog.Descriptor, bool) {
			d, ok := r.live[name]
			return d, ok
		},
		Bind: func(query string) (plan.Node, error) {
			if r.live == nil {
				return nil, errors.New("bound " + query + " before the live catalog was installed")
			}
			r.events = append(r.events, "bind "+query)
			if query == selfJoinQuery {
				return selfJoin(r.live["s"])
			}
			// A view's plan as the binder gives it: a scan of the stream.
			return scanOf(r.live["s"])
		},
		StartTable: func(d *catalog.Descriptor) error {
			r.events = append(r.events, "table "+d.Name)
			return nil
		},
		StartView: func(d *catalog.Descriptor, root plan.Node) error {
			r.events = append(r.events, "view "+d.Name)
			return nil
		},
	}
}

// selfJoinQuery binds to selfJoin: a view of format DataflowSharedSubplans
// that cannot move to DataflowAppendOnlyJoins, under which its inner
// join of a stream with itself would be append-only.
const selfJoinQuery = "SELECT * FROM s a JOIN s b ON a.k = b.k"

func selfJoin(d *catalog.Descriptor) (plan.Node, error) {
	l, err := scanOf(d)
	if err != nil {
		return nil, err
	}
	r, err := scanOf(d)
	if err != nil {
		return nil, err
	}
	key := []expr.Expr{&expr.ColRef{Idx: 0, T: types.Int4}}
	return &plan.Join{Kind: plan.InnerJoin, Left: l, Right: r, LeftKeys: key, RightKeys: key,
		Cols: append(append([]types.Column(nil), l.Schema()...), r.Schema()...)}, nil
}

// scanOf is a plan that scans d.
func scanOf(d *catalog.Descriptor) (plan.Node, error) {
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	return &plan.Scan{Object: d, Cols: cols}, nil
}

// TestCatalogLoad: Load installs the stored catalog in id order, moves an
// older view to the newest format its state is in and records the state
// layout of a view without one (stored and in the live catalog), binds each stream and table to its JetStream stream, then
// starts tables and views in id order, skipping the objects without a
// dataflow; a view stored without a plan is bound by the binder it is
// given, one with a plan is not.
func TestCatalogLoad(t *testing.T) {
	b, err := broker.Connect(testutil.StartNATS(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st, err := storage.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := NewCatalog(CatalogConfig{Store: st, Broker: b, Log: slog.New(slog.DiscardHandler)})

	cols := catalog.ColumnsFrom([]types.Column{{Name: "x", Type: types.Int8}})
	old := catalog.DataflowLatest - 1
	descs := []*catalog.Descriptor{
		{Name: "s", Kind: catalog.KindStream, Subject: "load.s", JSStream: "gone", Columns: cols},
		{Name: "v", Kind: catalog.KindView, Query: "SELECT x FROM s", Dataflow: old, Columns: cols},
		{Name: "t", Kind: catalog.KindTable, Subject: "load.t", Columns: cols},
		{Name: "pv", Kind: catalog.KindPlainView, Query: "SELECT x FROM t", Columns: cols},
		{Name: "a", Kind: catalog.KindView, Query: "SELECT x FROM t", Dataflow: catalog.DataflowLatest, Columns: cols},
	}
	lookup := func(name string) (*catalog.Descriptor, bool) {
		for _, d := range descs {
			if d.Name == name {
				return d, true
			}
		}
		return nil, false
	}
	for _, d := range descs {
		if d.Name == "a" {
			root, err := scanOf(descs[2])
			if err != nil {
				t.Fatal(err)
			}
			if d.Plan, err = plan.Encode(root, lookup); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Create(d); err != nil {
			t.Fatal(err)
		}
	}

	r := &loadRecorder{}
	if err := c.Load(r.hooks()); err != nil {
		t.Fatal(err)
	}
	bindV := "bind SELECT x FROM s"
	want := []string{"install s v t pv a", bindV, "update v", "update a", bindV, "view v", "table t", "view a"}
	if !reflect.DeepEqual(r.events, want) {
		t.Errorf("Load did %q; want %q", r.events, want)
	}
	if got := r.live["v"].Dataflow; got != catalog.DataflowLatest {
		t.Errorf("live view v has format %d after Load; want %d (moved from %d)", got, catalog.DataflowLatest, old)
	}
	if got := storedNames(t, st)["v"].Dataflow; got != catalog.DataflowLatest {
		t.Errorf("stored view v has format %d after Load; want %d", got, catalog.DataflowLatest)
	}
	for _, name := range []string{"s", "t"} {
		d := r.live[name]
		js, err := b.JS.StreamNameBySubject(t.Context(), d.Subject)
		if err != nil {
			t.Fatalf("%s's subject has no JetStream stream after Load: %v", name, err)
		}
		if d.JSStream != js {
			t.Errorf("live %s is bound to JetStream stream %q; its subject is held by %q", name, d.JSStream, js)
		}
	}

	if got := storedNames(t, st)["a"].NextOp; got == 0 {
		t.Errorf("stored view a has no state layout recorded after Load")
	}

	// A second Load (as after ROLLBACK TO) finds v moved, both recorded,
	// and leaves them.
	r = &loadRecorder{}
	if err := c.Load(r.hooks()); err != nil {
		t.Fatal(err)
	}
	want = []string{"install s v t pv a", bindV, "view v", "table t", "view a"}
	if !reflect.DeepEqual(r.events, want) {
		t.Errorf("second Load did %q; want %q", r.events, want)
	}
}

// TestCatalogLoadRefusesFormats: a view in a format this binary does not
// read is refused with 0A000, naming the view, before the live catalog is
// touched or anything starts; so is a data directory of such a format. A
// view older than DataflowMinSupported that does not move forward is
// refused once the views have moved, before anything starts.
func TestCatalogLoadRefusesFormats(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(t *testing.T, st *storage.Store, c *Catalog)
		// moved: the views were moved before the refusal, so the live
		// catalog was installed and the views bound.
		moved bool
	}{
		{name: "view", set: func(t *testing.T, st *storage.Store, c *Catalog) {
			if err := c.Create(&catalog.Descriptor{Name: "v", Kind: catalog.KindView, Query: "SELECT 1", Dataflow: catalog.DataflowLatest + 1}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "unmoved view", moved: true, set: func(t *testing.T, st *storage.Store, c *Catalog) {
			if err := c.Create(&catalog.Descriptor{Name: "s", Kind: catalog.KindStream, Subject: "s",
				Columns: []catalog.Column{{Name: "k", Type: "integer"}}}); err != nil {
				t.Fatal(err)
			}
			if err := c.Create(&catalog.Descriptor{Name: "v", Kind: catalog.KindView, Query: selfJoinQuery, Dataflow: catalog.DataflowSharedSubplans}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "directory", set: func(t *testing.T, st *storage.Store, c *Catalog) {
			b := st.NewBatch()
			defer b.Close()
			if err := st.RatchetFormat(b, catalog.DataflowLatest+1); err != nil {
				t.Fatal(err)
			}
			if err := st.Commit(b, true); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, c := openCatalogStore(t, filepath.Join(t.TempDir(), "state"))
			defer st.Close()
			tc.set(t, st, c)
			r := &loadRecorder{}
			err := c.Load(r.hooks())
			if code := sqlerr.From(err).Code; code != sqlerr.FeatureNotSupported {
				t.Fatalf("Load: %v (SQLSTATE %s); want SQLSTATE %s", err, code, sqlerr.FeatureNotSupported)
			}
			want := []string(nil)
			if tc.moved {
				want = []string{"install s v", "bind " + selfJoinQuery}
				if msg, f := err.Error(), catalog.DataflowSharedSubplans; !strings.Contains(msg, fmt.Sprintf("materialized view v holds state in format %d, older than this streamdb reads", f)) {
					t.Errorf("Load: %q does not name the view and its format", msg)
				}
			}
			if !reflect.DeepEqual(r.events, want) {
				t.Errorf("Load refused the catalog after %q; want %q", r.events, want)
			}
		})
	}
}
