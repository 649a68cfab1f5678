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

// TestCommitBetweenBarriersOnEverySubject: a commit to two subjects
// published while a barrier is on its way to both readers lands after
// that barrier on both, even when one reader sends the barrier only after
// the commit's message has reached it; and before the next barrier on
// both. The test holds back subject b's barrier request (it forwards b's
// requests itself) until b's reader has the commit's message in hand.
func TestCommitBetweenBarriersOnEverySubject(t *testing.T) {
	b, err := broker.StartEmbedded("127.0.0.1:-1", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	streams := map[string]string{}
	for _, subj := range []string{"fence.a", "fence.b"} {
		if streams[subj], err = b.EnsureStream(ctx, subj, subj); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt := NewRuntime(memoryStore(t), b, log, time.Hour) // barriers only when the test injects them
	t.Cleanup(rt.Close)

	p := &pipeline{id: 1, name: "v", launched: true, in: make(chan pipelineMsg, 256), rt: rt, log: log}
	cols := []types.Column{{Name: "v", Type: types.Int8}}
	for i, subj := range []string{"fence.a", "fence.b"} {
		p.sources = append(p.sources, &sourceReader{
			idx: uint16(i), name: subj, jsStream: streams[subj], subject: subj,
			decoder: NewRowDecoder(cols), broker: b, rt: rt, log: log,
			barriers: make(chan barrierRequest, 64), progress: make(chan struct{}, 1),
			out: p.in, free: make(chan *Chunk, freeChunks),
		})
	}
	srcA, srcB := p.sources[0], p.sources[1]
	rt.mu.Lock()
	rt.pipelines[p.id] = p
	rt.mu.Unlock()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go srcA.run(runCtx)
	// srcB is attached as run would attach it, but its barrier requests
	// wait in its channel until the test forwards them.
	srcB.quit, srcB.failed = runCtx.Done(), make(chan error, 1)
	rt.subjectReaders().join(srcB)
	defer srcB.leave()
	forwardB := func() { srcB.forward(<-srcB.barriers) }

	// seen reads the pipeline's input until input src has delivered
	// barrier e, and returns the rows src delivered before it.
	rows := map[uint16][]string{}
	barrier := map[uint16]uint64{}
	seen := func(src uint16, e uint64) []string {
		t.Helper()
		for barrier[src] == 0 {
			select {
			case m := <-p.in:
				if m.chunk != nil {
					for _, r := range m.chunk.Rows {
						rows[m.src] = append(rows[m.src], fmt.Sprint(r[0].I))
					}
				}
				if m.barrier != 0 {
					barrier[m.src] = m.barrier
				}
			case <-ctx.Done():
				t.Fatalf("input %d never sent barrier %d", src, e)
			}
		}
		if barrier[src] != e {
			t.Fatalf("input %d sent barrier %d, want %d", src, barrier[src], e)
		}
		got := rows[src]
		delete(rows, src)
		delete(barrier, src)
		return got
	}

	rt.injectBarrier() // epoch 1
	if rows := seen(0, 1); len(rows) != 0 {
		t.Fatalf("a sent %v before barrier 1", rows)
	}
	var seqB uint64
	err = rt.PublishFenced([]string{"fence.a", "fence.b"}, func() (map[string]uint64, error) {
		seqs := map[string]uint64{}
		for subj, v := range map[string]string{"fence.a": `{"v": 1}`, "fence.b": `{"v": 2}`} {
			ack, err := b.JS.Publish(ctx, subj, []byte(v))
			if err != nil {
				return seqs, err
			}
			seqs[subj] = ack.Sequence
		}
		seqB = seqs["fence.b"]
		return seqs, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Let b's reader get the commit's message: it either takes it
	// (before barrier 1, which is wrong) or holds it at the ceiling.
	readerB := srcB.firstReader()
	for {
		readerB.cmu.Lock()
		took := readerB.pos >= seqB
		readerB.cmu.Unlock()
		if took || readerB.heldAt.Load() == seqB {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("b's reader never received the commit's message")
		case <-time.After(time.Millisecond):
		}
	}
	forwardB()
	if rows := seen(1, 1); len(rows) != 0 {
		t.Fatalf("b sent %v before barrier 1: the commit is split across epochs 1 and 2", rows)
	}

	rt.injectBarrier() // epoch 2
	forwardB()
	if got := fmt.Sprint(seen(0, 2), seen(1, 2)); got != "[1] [2]" {
		t.Fatalf("rows before barrier 2 on a and b: %s, want [1] [2]", got)
	}
	if n := rt.ceilings.Load(); n != 0 {
		t.Fatalf("%d ceilings left after both barriers passed", n)
	}
}
