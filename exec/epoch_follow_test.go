package exec

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"streamdb/broker"
	"streamdb/types"
)

// A follower's reader sends barrier e having taken exactly the messages
// of its subject up to the epoch's cut: not past it (the rest stay for
// later epochs), and not short of it when the cut names messages not yet
// published (the barrier waits for them). A later epoch without a cut
// for the subject takes nothing new.
func TestFollowerReadsExactlyToTheCut(t *testing.T) {
	b, err := broker.StartEmbedded("127.0.0.1:-1", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const subj = "follow.a"
	stream, err := b.EnsureStream(ctx, subj, subj)
	if err != nil {
		t.Fatal(err)
	}
	publish := func(from, to int) {
		for v := from; v <= to; v++ {
			if _, err := b.JS.Publish(ctx, subj, fmt.Appendf(nil, `{"v": %d}`, v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt := NewRuntime(memoryStore(t), b, log, time.Hour)
	t.Cleanup(rt.Close)

	p := &pipeline{id: 1, name: "v", launched: true, in: make(chan pipelineMsg, 256), rt: rt, log: log}
	src := &sourceReader{
		idx: 0, name: subj, jsStream: stream, subject: subj,
		decoder: NewRowDecoder([]types.Column{{Name: "v", Type: types.Int8}}), broker: b, rt: rt, log: log,
		barriers: make(chan barrierRequest, 64), progress: make(chan struct{}, 1),
		out: p.in, free: make(chan *Chunk, freeChunks),
		cutter: rt.followCutter(subj), // as addSource gives a follower's
	}
	p.sources = []*sourceReader{src}
	rt.mu.Lock()
	rt.pipelines[p.id] = p
	rt.mu.Unlock()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go src.run(runCtx)

	// take notes m's rows in carry and returns its barrier (0: none).
	var carry []int64
	take := func(m pipelineMsg) uint64 {
		if m.chunk != nil {
			for _, r := range m.chunk.Rows {
				carry = append(carry, r[0].I)
			}
		}
		return m.barrier
	}
	// next reads the pipeline's input up to the next barrier and returns
	// it with the rows before it.
	next := func() (uint64, []int64) {
		t.Helper()
		for {
			select {
			case m := <-p.in:
				if e := take(m); e != 0 {
					rows := carry
					carry = nil
					return e, rows
				}
			case <-ctx.Done():
				t.Fatal("no barrier")
			}
		}
	}

	publish(1, 10) // sequences 1..10
	rt.injectFollowed(FollowedEpoch{Epoch: 5, Cuts: map[string]uint64{subj: 4}})
	if e, rows := next(); e != 5 || fmt.Sprint(rows) != "[1 2 3 4]" {
		t.Fatalf("barrier %d after rows %v; want barrier 5 after [1 2 3 4] (the cut is sequence 4)", e, rows)
	}

	// A cut past the stream's end: the barrier waits at the reader.
	rt.injectFollowed(FollowedEpoch{Epoch: 9, Cuts: map[string]uint64{subj: 12}})
	reader := src.firstReader()
	for !reader.waiting.Load() {
		select {
		case m := <-p.in:
			if e := take(m); e != 0 {
				t.Fatalf("barrier %d sent before the cut's messages 11 and 12 were published", e)
			}
		case <-ctx.Done():
			t.Fatal("the barrier never waited at the reader")
		case <-time.After(time.Millisecond):
		}
	}
	publish(11, 13)
	if e, rows := next(); e != 9 || fmt.Sprint(rows) != "[5 6 7 8 9 10 11 12]" {
		t.Fatalf("barrier %d after rows %v; want barrier 9 after [5 ... 12]", e, rows)
	}

	// No cut for the subject: nothing new (13 stays).
	rt.injectFollowed(FollowedEpoch{Epoch: 10, Cuts: map[string]uint64{"other": 7}})
	if e, rows := next(); e != 10 || len(rows) != 0 {
		t.Fatalf("barrier %d after rows %v; want barrier 10 with no rows", e, rows)
	}
	rt.injectFollowed(FollowedEpoch{Epoch: 11, Cuts: map[string]uint64{subj: 13}})
	if e, rows := next(); e != 11 || fmt.Sprint(rows) != "[13]" {
		t.Fatalf("barrier %d after rows %v; want barrier 11 after [13]", e, rows)
	}
}
