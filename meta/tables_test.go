package meta

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/tests/testutil"
	"streamdb/types"
)

// tablesProbe is the frontend as the writer sees it in these tests: a
// lease that can be lost, the acknowledged positions, and the waits for
// a table to apply its changelog.
type tablesProbe struct {
	mu         sync.Mutex
	fenced     bool
	acked      map[string]uint64
	waits      []uint64
	maxPayload int64
}

func (p *tablesProbe) fence() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fenced {
		return errors.New("lease lost")
	}
	return nil
}

func (p *tablesProbe) acknowledged(subject string, seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acked[subject] = max(p.acked[subject], seq)
}

func (p *tablesProbe) waitTableAt(_ context.Context, _ *catalog.Descriptor, seq uint64, _ string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waits = append(p.waits, seq)
	return nil
}

// publishNow is the runtime's fence of a publish to several subjects,
// with no barrier to hold off.
type publishNow struct{}

func (publishNow) PublishFenced(_ []string, publish func() (map[string]uint64, error)) error {
	_, err := publish()
	return err
}

// newTestTables is a writer over a real NATS JetStream and a Pebble store
// in a temporary directory.
func newTestTables(t *testing.T) (*Tables, *tablesProbe, *broker.Broker, *storage.Store) {
	t.Helper()
	b, err := broker.Connect(testutil.StartNATS(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	store, err := storage.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := b.EnsureTxnStream(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := &tablesProbe{acked: map[string]uint64{}, maxPayload: 1 << 20}
	tables := NewTables(TablesConfig{
		Store: store, Broker: b, Runtime: publishNow{}, Streams: NewStreams(b),
		Log: slog.New(slog.DiscardHandler), Fence: p.fence, Acknowledged: p.acknowledged,
		WaitTableAt: p.waitTableAt,
		MaxPayload: func() int64 {
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.maxPayload
		},
	})
	return tables, p, b, store
}

// testTable is a table with its own JetStream stream.
func testTable(t *testing.T, b *broker.Broker, id uint32, name string) *catalog.Descriptor {
	t.Helper()
	subject := "streamdb.table." + name
	stream, err := b.EnsureStream(context.Background(), name, subject)
	if err != nil {
		t.Fatal(err)
	}
	return &catalog.Descriptor{ID: id, Name: name, Kind: catalog.KindTable, Subject: subject, JSStream: stream}
}

func rowChange(id int64) []exec.Change {
	return []exec.Change{{Row: types.Row{types.NewInt(id)}, Sign: 1}}
}

func rowPart(id int64) []byte { return fmt.Appendf(nil, `[{"id":%d}]`, id) }

// changelog reads subject's messages as readers do (a committed
// transaction's data in place of its reference).
func changelog(t *testing.T, b *broker.Broker, d *catalog.Descriptor) []string {
	t.Helper()
	ctx := context.Background()
	last, err := b.LastSeq(ctx, d.JSStream)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = b.ReadRange(ctx, d.JSStream, d.Subject, 1, last, func(_ uint64, data []byte) error {
		out = append(out, string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTablesGroupCommit: commits queued while no leader publishes go out
// together as one changelog message, acknowledged before their writers
// hear back; a snapshot returns them until the table's state holds their
// sequence, then forgets them.
func TestTablesGroupCommit(t *testing.T) {
	tables, p, b, store := newTestTables(t)
	d := testTable(t, b, 7, "t")
	log := tables.Log(d.ID)
	if log != tables.Log(d.ID) {
		t.Fatal("Log made a second log for the same table")
	}
	log.Lock()
	if err := log.EnsureCurrent(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	var entries []*LogEntry
	for id := int64(1); id <= 3; id++ {
		entries = append(entries, log.Queue(rowChange(id), rowPart(id)))
	}
	log.Unlock()
	for i, en := range entries {
		if err := log.Await(d, en); err != nil {
			t.Fatalf("commit %d: %v", i+1, err)
		}
	}
	if got, want := changelog(t, b, d), []string{`[{"id":1},{"id":2},{"id":3}]`}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("changelog %q, want the three commits in one message %q", got, want)
	}
	if p.acked[d.Subject] != 1 {
		t.Fatalf("acknowledged %v, want %s at 1", p.acked, d.Subject)
	}

	snap, pending, _, err := log.Snapshot(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	snap.Close()
	if len(pending) != 3 || pending[2].Changes()[0].Row[0].I != 3 {
		t.Fatalf("snapshot before the state holds them: %d entries, want the 3 commits", len(pending))
	}
	batch := store.NewBatch()
	if err := storage.PutPosition(batch, d.ID, 0, storage.SourcePosition{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	if err := batch.Commit(nil); err != nil {
		t.Fatal(err)
	}
	snap, pending, _, err = log.Snapshot(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	snap.Close()
	if len(pending) != 0 {
		t.Fatalf("snapshot once the state holds sequence 1: %d entries, want none", len(pending))
	}
}

// TestTablesFailedPublish: a publish refused (here, the lease lost)
// fails its commit with the refusal, fails every commit queued after it
// with 40001 and keeps none of them; the next writer waits for the whole
// changelog before it reads the table again.
func TestTablesFailedPublish(t *testing.T) {
	tables, p, b, _ := newTestTables(t)
	d := testTable(t, b, 7, "t")
	log := tables.Log(d.ID)
	ctx := context.Background()
	log.Lock()
	if err := log.EnsureCurrent(ctx, d); err != nil {
		t.Fatal(err)
	}
	// One commit per message, so the second is queued behind the first.
	p.maxPayload = 4096 + 10
	p.fenced = true
	first := log.Queue(rowChange(1), rowPart(1))
	second := log.Queue(rowChange(2), rowPart(2))
	log.Unlock()

	var se *sqlerr.Error
	if err := log.Await(d, first); !errors.As(err, &se) || se.Code != sqlerr.CannotConnectNow {
		t.Fatalf("the fenced commit: %v, want FencedError (57P03)", err)
	}
	if err := log.Await(d, second); !errors.As(err, &se) || se.Code != sqlerr.SerializationFailure {
		t.Fatalf("the commit queued after it: %v, want 40001", err)
	}
	if got := changelog(t, b, d); len(got) != 0 {
		t.Fatalf("changelog %q, want nothing", got)
	}
	snap, pending, _, err := log.Snapshot(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	snap.Close()
	if len(pending) != 0 {
		t.Fatalf("the log kept %d failed commits", len(pending))
	}

	waits := len(p.waits)
	log.Lock()
	defer log.Unlock()
	if err := log.EnsureCurrent(ctx, d); err != nil {
		t.Fatal(err)
	}
	if len(p.waits) != waits+1 {
		t.Fatalf("after a failed publish the next writer waited %d times, want once", len(p.waits)-waits)
	}
}

// TestTablesPublishTxn: a commit to two tables lands through the
// transaction stream whole: each changelog reads its table's rows, the
// transaction is decided committed, both subjects are acknowledged and
// each log holds its table's changes. Fenced, nothing is published.
func TestTablesPublishTxn(t *testing.T) {
	tables, p, b, _ := newTestTables(t)
	d1 := testTable(t, b, 7, "t1")
	d2 := testTable(t, b, 8, "t2")
	l1, l2 := tables.Log(d1.ID), tables.Log(d2.ID)
	l1.Lock()
	l2.Lock()
	err := tables.PublishTxn([]TxnPart{
		{D: d1, Msgs: [][]byte{rowPart(1)}, Log: l1, Changes: rowChange(1)},
		{D: d2, Msgs: [][]byte{rowPart(2)}, Log: l2, Changes: rowChange(2)},
	})
	l2.Unlock()
	l1.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if got := changelog(t, b, d1); fmt.Sprint(got) != `[[{"id":1}]]` {
		t.Fatalf("t1's changelog %q", got)
	}
	if got := changelog(t, b, d2); fmt.Sprint(got) != `[[{"id":2}]]` {
		t.Fatalf("t2's changelog %q", got)
	}
	var txns []broker.Txn
	if err := b.TxnIntents(context.Background(), 1, func(txn broker.Txn, _ uint64) bool {
		txns = append(txns, txn)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(txns) != 1 || !txns[0].Decided || !txns[0].Committed || len(txns[0].Intent.Subjects) != 2 {
		t.Fatalf("transactions %+v, want one over two subjects, decided committed", txns)
	}
	if p.acked[d1.Subject] == 0 || p.acked[d2.Subject] == 0 {
		t.Fatalf("acknowledged %v, want both subjects", p.acked)
	}
	for _, c := range []struct {
		log *TableLog
		d   *catalog.Descriptor
		id  int64
	}{{l1, d1, 1}, {l2, d2, 2}} {
		snap, pending, _, err := c.log.Snapshot(c.d.ID)
		if err != nil {
			t.Fatal(err)
		}
		snap.Close()
		if len(pending) != 1 || pending[0].Changes()[0].Row[0].I != c.id {
			t.Fatalf("%s's log holds %d entries, want the commit's", c.d.Name, len(pending))
		}
	}

	p.fenced = true
	err = tables.PublishTxn([]TxnPart{{D: d1, Msgs: [][]byte{rowPart(3)}}, {D: d2, Msgs: [][]byte{rowPart(4)}}})
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.CannotConnectNow {
		t.Fatalf("fenced: %v, want FencedError (57P03)", err)
	}
	if got := changelog(t, b, d1); len(got) != 1 {
		t.Fatalf("t1's changelog after the fenced commit %q", got)
	}
}

// TestTablesResolveTxns: at start, a transaction over two subjects that a
// crash left undecided is decided aborted, so readers waiting at its
// references go on; one already decided keeps its decision.
func TestTablesResolveTxns(t *testing.T) {
	tables, _, b, _ := newTestTables(t)
	ctx := context.Background()
	intent := []byte(`{"subjects":[{"stream":"a","subject":"x.a"},{"stream":"b","subject":"x.b"}]}`)
	for _, id := range []string{"undecided", "committed"} {
		if _, err := b.JS.Publish(ctx, broker.TxnIntentSubject(id), intent); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.DecideTxn(ctx, "committed", true); err != nil {
		t.Fatal(err)
	}
	if err := tables.ResolveTxns(ctx); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"undecided": false, "committed": true} {
		committed, decided, err := b.TxnOutcome(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !decided || committed != want {
			t.Fatalf("transaction %s: decided %v committed %v, want decided, committed %v", id, decided, committed, want)
		}
	}
}

// TestTablesCommit: a commit to one table prepared under its lock lands
// as one changelog message when it fits in one, through the transaction
// stream (one reference read as its messages) when it does not, and not
// at all when prepare refuses it; the lock is let go either way.
func TestTablesCommit(t *testing.T) {
	tables, _, b, _ := newTestTables(t)
	d := testTable(t, b, 7, "t")
	prepared := func(msgs ...[]byte) func(*TableLog) ([]exec.Change, [][]byte, error) {
		return func(log *TableLog) ([]exec.Change, [][]byte, error) {
			if err := log.EnsureCurrent(context.Background(), d); err != nil {
				return nil, nil, err
			}
			return rowChange(int64(len(msgs))), msgs, nil
		}
	}
	if err := tables.Commit(d, prepared(rowPart(1))); err != nil {
		t.Fatal(err)
	}
	if err := tables.Commit(d, prepared(rowPart(2), rowPart(3))); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	if err := tables.Commit(d, func(*TableLog) ([]exec.Change, [][]byte, error) { return nil, nil, refused }); err != refused {
		t.Fatalf("a refused commit answered %v", err)
	}
	want := `[[{"id":1}] [{"id":2}] [{"id":3}]]`
	if got := changelog(t, b, d); fmt.Sprint(got) != want {
		t.Fatalf("changelog %q, want %s", got, want)
	}
	snap, pending, _, err := tables.Log(d.ID).Snapshot(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	snap.Close()
	if len(pending) != 2 {
		t.Fatalf("the log holds %d commits, want both", len(pending))
	}
}
