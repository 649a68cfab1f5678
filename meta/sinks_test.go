package meta

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/tests/testutil"
	"streamdb/types"
)

// fakeSinkRuntime records which views write which sinks' outboxes.
type fakeSinkRuntime struct{ writes map[uint32]map[uint32]bool }

func (r *fakeSinkRuntime) AddSink(viewID, sinkID uint32) {
	if r.writes[viewID] == nil {
		r.writes[viewID] = map[uint32]bool{}
	}
	r.writes[viewID][sinkID] = true
}

func (r *fakeSinkRuntime) RemoveSink(viewID, sinkID uint32) { delete(r.writes[viewID], sinkID) }

func sinkNames(ds []*storage.SinkDescriptor) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

// TestSinks: sinks are created with their JetStream stream and the
// runtime told, listed by name, found by name and by view (id and name),
// refused a subject another sink has, counted with their outbox's lag,
// and deleted with their outbox; what is stored survives a reopen.
func TestSinks(t *testing.T) {
	b, err := broker.Connect(testutil.StartNATS(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state")
	store, err := storage.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { store.Close() }()
	rt := &fakeSinkRuntime{writes: map[uint32]map[uint32]bool{}}
	newSinks := func() *Sinks {
		return NewSinks(SinksConfig{Store: store, Broker: b, Runtime: rt, Log: slog.New(slog.DiscardHandler)})
	}
	s := newSinks()

	orders := &catalog.Descriptor{ID: 7, Name: "orders_mv", Kind: catalog.KindView}
	totals := &catalog.Descriptor{ID: 8, Name: "totals", Kind: catalog.KindTable}
	zeta, err := s.Create(ctx, NewSink{Name: "zeta", Owner: "alice", View: orders, KeyCols: []int{0},
		Subject: "out.zeta", Format: "json", Envelope: "upsert"})
	if err != nil {
		t.Fatal(err)
	}
	alpha, err := s.Create(ctx, NewSink{Name: "alpha", Owner: "streamdb", View: totals,
		Subject: "out.alpha", Format: "avro", Envelope: "changelog", Schema: []byte(`{"type":"record"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if zeta.ID == alpha.ID || zeta.ID == 0 {
		t.Fatalf("sink ids %d and %d, want distinct object ids", zeta.ID, alpha.ID)
	}
	if !rt.writes[orders.ID][zeta.ID] || !rt.writes[totals.ID][alpha.ID] {
		t.Fatalf("runtime writes %v, want view %d -> sink %d and view %d -> sink %d", rt.writes, orders.ID, zeta.ID, totals.ID, alpha.ID)
	}
	js := b.JS
	st, err := js.Stream(ctx, zeta.JSStream)
	if err != nil {
		t.Fatalf("sink zeta's JetStream stream %q: %v", zeta.JSStream, err)
	}
	if subs := st.CachedInfo().Config.Subjects; !reflect.DeepEqual(subs, []string{"out.zeta"}) {
		t.Errorf("stream %s holds subjects %v, want [out.zeta]", zeta.JSStream, subs)
	}

	all, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if got := sinkNames(all); !reflect.DeepEqual(got, []string{"alpha", "zeta"}) {
		t.Fatalf("List: %v, want [alpha zeta]", got)
	}
	want := *zeta
	if got, err := s.Named("zeta"); err != nil || got == nil || !got.CreatedAt.Equal(want.CreatedAt) {
		t.Fatalf("Named(zeta): %+v, %v; want %+v", got, err, want)
	} else {
		got.CreatedAt = want.CreatedAt
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("Named(zeta): %+v, want %+v", *got, want)
		}
	}
	if got, err := s.Named("nope"); err != nil || got != nil {
		t.Errorf("Named(nope): %v, %v; want nil", got, err)
	}
	// A view that took the id of a dropped one is not the sink's view.
	renamed := &catalog.Descriptor{ID: orders.ID, Name: "other_mv", Kind: catalog.KindView}
	if on, err := s.On([]*catalog.Descriptor{renamed, totals}); err != nil || !reflect.DeepEqual(sinkNames(on), []string{"alpha"}) {
		t.Errorf("On(other_mv, totals): %v, %v; want [alpha]", sinkNames(on), err)
	}
	if on, err := s.On([]*catalog.Descriptor{orders}); err != nil || !reflect.DeepEqual(sinkNames(on), []string{"zeta"}) {
		t.Errorf("On(orders_mv): %v, %v; want [zeta]", sinkNames(on), err)
	}

	if d, err := s.CheckFree("zeta", "out.zeta"); err != nil || d == nil || d.ID != zeta.ID {
		t.Errorf("CheckFree(zeta): %v, %v; want sink zeta", d, err)
	}
	if _, err := s.CheckFree("beta", "out.alpha"); sqlstate(err) != sqlerr.DuplicateObject {
		t.Errorf("CheckFree(beta, out.alpha): %v, want SQLSTATE %s", err, sqlerr.DuplicateObject)
	}
	if d, err := s.CheckFree("beta", "out.beta"); err != nil || d != nil {
		t.Errorf("CheckFree(beta, out.beta): %v, %v; want free", d, err)
	}

	// zeta: started, a snapshot and two entries of 2 and 1 changes
	// pending; alpha: nothing yet; keys of a sink id no sink has are
	// nobody's lag.
	row := func(i int64) types.Row { return types.Row{types.NewInt(i), types.NewString(fmt.Sprint("r", i))} }
	other := zeta.ID + alpha.ID + 100
	wb := store.NewBatch()
	for k, v := range map[string][]byte{
		string(storage.SinkStartedKey(zeta.ID)):                       nil,
		string(storage.OutboxKey(zeta.ID, 3, storage.OutboxEpoch)):    nil,
		string(storage.OutboxKey(zeta.ID, 4, storage.OutboxEpoch)):    exec.EncodeOutboxChanges([]exec.RowDiff{{Row: row(1), Diff: 1}, {Row: row(2), Diff: -1}}),
		string(storage.OutboxKey(zeta.ID, 5, storage.OutboxRollback)): exec.EncodeOutboxChanges([]exec.RowDiff{{Row: row(3), Diff: 1}}),
		string(storage.SinkStartedKey(other)):                         nil,
		string(storage.OutboxKey(other, 5, storage.OutboxEpoch)):      exec.EncodeOutboxChanges([]exec.RowDiff{{Row: row(4), Diff: 1}}),
	} {
		if err := wb.Set([]byte(k), v, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Commit(wb, true); err != nil {
		t.Fatal(err)
	}
	wb.Close()
	lags, err := s.Lag()
	if err != nil {
		t.Fatal(err)
	}
	type lag struct {
		name            string
		epochs, changes int64
	}
	var gotLag []lag
	for _, l := range lags {
		gotLag = append(gotLag, lag{l.Sink.Name, l.Epochs, l.Changes})
	}
	if wantLag := []lag{{"alpha", 0, 0}, {"zeta", 3, 3}}; !reflect.DeepEqual(gotLag, wantLag) {
		t.Errorf("Lag: %v, want %v", gotLag, wantLag)
	}
	// SHOW SINKS' rows: the lag, and the publisher's status of each.
	rows, err := s.Rows(func(d *SinkDescriptor) SinkStatus {
		if d.Name == "zeta" {
			return SinkStatus{Epoch: 2, Error: "nats: timeout"}
		}
		return SinkStatus{Stopped: true, Error: "encoding failed"}
	})
	if err != nil {
		t.Fatal(err)
	}
	var gotRows []string
	for _, r := range rows {
		gotRows = append(gotRows, fmt.Sprint(r))
	}
	wantRows := []string{
		fmt.Sprint(types.Row{types.NewString("alpha"), types.NewString("totals"), types.NewString("out.alpha"), types.NewString(alpha.JSStream),
			types.NewString("avro"), types.NewString("changelog"), types.Null, types.NewInt(0), types.NewInt(0), types.NewString("stopped: encoding failed")}),
		fmt.Sprint(types.Row{types.NewString("zeta"), types.NewString("orders_mv"), types.NewString("out.zeta"), types.NewString(zeta.JSStream),
			types.NewString("json"), types.NewString("upsert"), types.NewInt(2), types.NewInt(3), types.NewInt(3), types.NewString("retrying: nats: timeout")}),
	}
	if !reflect.DeepEqual(gotRows, wantRows) {
		t.Errorf("Rows:\n%s\nwant\n%s", strings.Join(gotRows, "\n"), strings.Join(wantRows, "\n"))
	}

	if err := s.Delete(zeta); err != nil {
		t.Fatal(err)
	}
	if len(rt.writes[orders.ID]) != 0 {
		t.Errorf("runtime still writes %v for view %d after the sink's delete", rt.writes[orders.ID], orders.ID)
	}
	left := 0
	if err := storage.ScanPrefix(store.DB(), storage.SinkPrefix(zeta.ID), func(_, _ []byte) error { left++; return nil }); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d keys of deleted sink zeta left, want none", left)
	}
	if _, err := js.Stream(ctx, zeta.JSStream); err != nil {
		t.Errorf("a sink's delete leaves its JetStream stream %s: %v", zeta.JSStream, err)
	}
	if d, err := s.CheckFree("zeta2", "out.zeta"); err != nil || d != nil {
		t.Errorf("CheckFree(zeta2, out.zeta) after zeta's delete: %v, %v; want free", d, err)
	}

	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if store, err = storage.Open(dir); err != nil {
		t.Fatal(err)
	}
	s = newSinks()
	all, err = s.List()
	if err != nil {
		t.Fatal(err)
	}
	if got := sinkNames(all); !reflect.DeepEqual(got, []string{"alpha"}) {
		t.Fatalf("List after a reopen: %v, want [alpha]", got)
	}
	if a := all[0]; a.Owner != "streamdb" || a.Format != "avro" || string(a.Schema) != `{"type":"record"}` || a.ViewID != totals.ID {
		t.Errorf("alpha after a reopen: %+v", a)
	}
}

// TestCheckSinkSubject: a sink may not publish to a subject streamdb
// reads (a stream's or table's) or keeps for itself (streamdb.>).
func TestCheckSinkSubject(t *testing.T) {
	objs := map[string]*catalog.Descriptor{
		"orders": {Name: "orders", Kind: catalog.KindStream, Subject: "in.orders"},
		"t":      {Name: "t", Kind: catalog.KindTable, Subject: "in.t"},
		"v":      {Name: "v", Kind: catalog.KindView, Subject: "in.v"},
	}
	for subject, want := range map[string]string{
		"out.orders":       "",
		"in.v":             "", // a view has no subject streamdb reads
		"in.orders":        sqlerr.DuplicateObject,
		"in.t":             sqlerr.DuplicateObject,
		"streamdb.txn.out": sqlerr.InvalidName,
	} {
		err := CheckSinkSubject(subject, objs)
		if got := sqlstate(err); (err == nil) != (want == "") || (err != nil && got != want) {
			t.Errorf("CheckSinkSubject(%q): %v, want SQLSTATE %q", subject, err, want)
		}
	}
}
