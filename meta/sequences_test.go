package meta

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"slices"
	"testing"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/sqlerr"
)

// startBroker runs an embedded NATS with JetStream in a temp dir.
func startBroker(t *testing.T) *broker.Broker {
	t.Helper()
	b, err := broker.StartEmbedded("127.0.0.1:-1", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func seqDesc(key string, q catalog.Sequence) *catalog.Descriptor {
	q.Key = key
	if q.Increment == 0 {
		q.Increment = 1
	}
	if q.Cache == 0 {
		q.Cache = 1
	}
	return &catalog.Descriptor{Name: "s_" + key, Kind: catalog.KindSequence, Sequence: &q}
}

func next(t *testing.T, s *Sequences, d *catalog.Descriptor) int64 {
	t.Helper()
	v, err := s.Next(testCtx(t), d)
	if err != nil {
		t.Fatalf("Next(%s): %v", d.Name, err)
	}
	return v
}

// record reads a sequence's durable record.
func record(t *testing.T, b *broker.Broker, key string) seqRecord {
	t.Helper()
	data, found, err := b.LastRecord(testCtx(t), sequenceStream, sequenceSubjectPrefix+key)
	if err != nil || !found {
		t.Fatalf("record of %s: found %v, %v", key, found, err)
	}
	var rec seqRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestSequencesNoRepeatAfterCrash: values are reserved in blocks before
// they are handed out, so a server that stops without Flush (a crash)
// resumes past its block and hands no value out twice; after a Flush (a
// clean shutdown) it resumes without a gap. Blocks grow while values are
// asked for quickly.
func TestSequencesNoRepeatAfterCrash(t *testing.T) {
	b := startBroker(t)
	log := slog.New(slog.DiscardHandler)
	d := seqDesc("a", catalog.Sequence{Start: 1, Min: 1, Max: math.MaxInt64})
	s := NewSequences(b, log)
	for want := int64(1); want <= 3; want++ {
		if v := next(t, s, d); v != want {
			t.Fatalf("value %d, want %d", v, want)
		}
	}
	if rec := record(t, b, "a"); rec.Next != 1+minSequenceBlock {
		t.Fatalf("the first reservation ends at %d, want %d", rec.Next, 1+minSequenceBlock)
	}
	// A crash: a new store over the same JetStream, nothing flushed.
	s = NewSequences(b, log)
	if v := next(t, s, d); v != 1+minSequenceBlock {
		t.Fatalf("after a crash: %d, want %d (past the reserved block)", v, 1+minSequenceBlock)
	}
	if last, called, err := s.Last(testCtx(t), d); err != nil || !called || last != 1+minSequenceBlock {
		t.Fatalf("Last: %d, %v, %v", last, called, err)
	}
	// Asked for quickly, a block doubles: the second reservation within
	// reserveWindow covers 64 values.
	for i := 0; i < minSequenceBlock; i++ {
		next(t, s, d)
	}
	if rec := record(t, b, "a"); rec.Next != 1+minSequenceBlock+minSequenceBlock+2*minSequenceBlock {
		t.Errorf("after a second quick reservation the record is at %d, want %d", rec.Next, 1+4*minSequenceBlock)
	}
	v := next(t, s, d)
	s.Flush(testCtx(t))
	s = NewSequences(b, log)
	if got := next(t, s, d); got != v+1 {
		t.Fatalf("after a clean shutdown: %d, want %d", got, v+1)
	}
}

// TestSequencesSetAndBounds: Set (setval) with called true and false,
// its bounds, exhaustion with and without CYCLE, a descending sequence,
// and Altered (ALTER SEQUENCE) following a new increment.
func TestSequencesSetAndBounds(t *testing.T) {
	b := startBroker(t)
	s := NewSequences(b, slog.New(slog.DiscardHandler))
	ctx := testCtx(t)
	d := seqDesc("b", catalog.Sequence{Start: 1, Min: 1, Max: 3})
	if _, called, err := s.Last(ctx, d); err != nil || called {
		t.Fatalf("Last of an unused sequence: called %v, %v", called, err)
	}
	if err := s.Set(ctx, d, 2, false); err != nil {
		t.Fatal(err)
	}
	if v := next(t, s, d); v != 2 {
		t.Fatalf("after setval(2, false): %d", v)
	}
	if err := s.Set(ctx, d, 1, true); err != nil {
		t.Fatal(err)
	}
	if v := next(t, s, d); v != 2 {
		t.Fatalf("after setval(1, true): %d", v)
	}
	next(t, s, d) // 3, the last
	if _, err := s.Next(ctx, d); sqlState(err) != sqlerr.SequenceGeneratorLimitExceeded {
		t.Fatalf("past MAXVALUE: %v", err)
	}
	if err := s.Set(ctx, d, 4, false); sqlState(err) != sqlerr.NumericValueOutOfRange {
		t.Fatalf("setval out of bounds: %v", err)
	}
	// Exhausted is durable.
	if _, err := NewSequences(b, slog.New(slog.DiscardHandler)).Next(ctx, d); sqlState(err) != sqlerr.SequenceGeneratorLimitExceeded {
		t.Fatalf("exhausted after a restart: %v", err)
	}

	c := seqDesc("c", catalog.Sequence{Increment: -2, Start: -1, Min: -5, Max: -1, Cycle: true})
	var got []int64
	for i := 0; i < 4; i++ {
		got = append(got, next(t, s, c))
	}
	if want := []int64{-1, -3, -5, -1}; !slices.Equal(got, want) {
		t.Fatalf("descending CYCLE: %v, want %v", got, want)
	}

	e := seqDesc("e", catalog.Sequence{Start: 1, Min: 1, Max: 100})
	next(t, s, e)
	next(t, s, e) // 2
	altered := seqDesc("e", catalog.Sequence{Increment: 10, Start: 1, Min: 1, Max: 100})
	if err := s.Altered(ctx, altered); err != nil {
		t.Fatal(err)
	}
	got = []int64{next(t, s, altered), next(t, s, altered)}
	if want := []int64{12, 22}; !slices.Equal(got, want) {
		t.Fatalf("after INCREMENT 10: %v, want %v", got, want)
	}
}
