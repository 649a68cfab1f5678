package exec

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"streamdb/broker"
	"streamdb/plan"
	"streamdb/types"
)

// alignedPair is one pipeline reading two watermarked subjects, a and b,
// whose messages carry their event time (microseconds) in column 0. No
// pipeline loop runs: the test drains the pipeline's channel itself.
type alignedPair struct {
	rt         *Runtime
	readers    [2]*subjectReader
	lastSeq    [2]uint64
	pipelineIn chan pipelineMsg
}

// startAlignedPair publishes n[i] messages to subject i, message k at
// event time k*step[i], then starts both inputs under drift.
func startAlignedPair(t *testing.T, ctx context.Context, drift time.Duration, n [2]int, step [2]time.Duration) *alignedPair {
	t.Helper()
	b, err := broker.StartEmbedded("127.0.0.1:-1", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rt := NewRuntime(memoryStore(t), b, log, time.Hour) // no barriers
	t.Cleanup(rt.Close)
	rt.SetAlignmentDrift(drift)

	ap := &alignedPair{rt: rt, pipelineIn: make(chan pipelineMsg, 64)}
	p := &pipeline{id: 1, name: "v", in: ap.pipelineIn, rt: rt, log: log}
	cols := []types.Column{{Name: "ts", Type: types.Int8}}
	for i, subj := range []string{"align.a", "align.b"} {
		stream, err := b.EnsureStream(ctx, subj, subj)
		if err != nil {
			t.Fatal(err)
		}
		for k := range n[i] {
			ack, err := b.JS.Publish(ctx, subj, fmt.Appendf(nil, `{"ts": %d}`, int64(k)*step[i].Microseconds()))
			if err != nil {
				t.Fatal(err)
			}
			ap.lastSeq[i] = ack.Sequence
		}
		p.sources = append(p.sources, &sourceReader{
			idx: uint16(i), name: subj, jsStream: stream, subject: subj,
			decoder: NewRowDecoder(cols), broker: b, rt: rt, log: log,
			pipe: p, watermark: &plan.Watermark{Col: 0},
			barriers: make(chan barrierRequest, 64), progress: make(chan struct{}, 1),
			out: p.in, free: make(chan *Chunk, freeChunks),
		})
	}
	runCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	for _, s := range p.sources {
		go s.run(runCtx)
	}
	go func() { // the pipeline: drop what arrives
		for {
			select {
			case m := <-ap.pipelineIn:
				m.release()
			case <-runCtx.Done():
				return
			}
		}
	}()
	for i, s := range p.sources {
		for ap.readers[i] = s.firstReader(); ap.readers[i] == nil; ap.readers[i] = s.firstReader() {
			if ctx.Err() != nil {
				t.Fatalf("input %d never attached to a reader", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return ap
}

// eventTime is reader i's event time, or -1 before it took a row.
func (ap *alignedPair) eventTime(i int) time.Duration {
	c := ap.readers[i].clock
	if !c.seen.Load() {
		return -1
	}
	return time.Duration(c.max.Load()) * time.Microsecond
}

// done reports whether both readers took their subject's last message.
func (ap *alignedPair) done() bool {
	for i, r := range ap.readers {
		r.cmu.Lock()
		pos := r.pos
		r.cmu.Unlock()
		if pos < ap.lastSeq[i] {
			return false
		}
	}
	return true
}

// TestReadersAlignByEventTime: subject a carries one message per second
// of event time and b ten, over the same five minutes, so readers that
// took turns by message count would put a minutes ahead of b. Aligned
// with a drift of 5 s, neither runs more than the drift (plus the gap to
// its next message) ahead of the other at any moment, and both read to
// the end.
func TestReadersAlignByEventTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const drift = 5 * time.Second
	step := [2]time.Duration{time.Second, 100 * time.Millisecond}
	ap := startAlignedPair(t, ctx, drift, [2]int{300, 3000}, step)
	samples := 0
	for !ap.done() {
		if ctx.Err() != nil {
			t.Fatalf("readers stopped at event times %v and %v", ap.eventTime(0), ap.eventTime(1))
		}
		// Each reader's event time only grows, so reading the one
		// ahead first bounds how far ahead it was at that moment.
		for i := range 2 {
			ahead := ap.eventTime(i)
			behind := ap.eventTime(1 - i)
			if behind >= 0 && ahead-behind > drift+step[i] {
				t.Fatalf("reader %d at %v ran ahead of reader %d at %v by more than the drift %v", i, ahead, 1-i, behind, drift)
			}
		}
		samples++
		time.Sleep(50 * time.Microsecond)
	}
	if samples < 10 {
		t.Logf("only %d samples: the readers finished fast", samples)
	}
	if w := ap.rt.AlignmentWaits()["align.a"]; w <= 0 {
		t.Fatalf("a's reader was never held (AlignmentWaits %v), yet it has ten times fewer messages per second of event time", ap.rt.AlignmentWaits())
	}
}

// TestAlignmentLetsGoOfCaughtUpReaders: a reader whose peer has read all
// its subject (or whose peer's subject is empty) is not held, however
// far ahead it is.
func TestAlignmentLetsGoOfCaughtUpReaders(t *testing.T) {
	for _, c := range []struct {
		name string
		n    [2]int
	}{
		{"peer ends early", [2]int{300, 100}},
		{"peer empty", [2]int{300, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ap := startAlignedPair(t, ctx, time.Second, c.n, [2]time.Duration{time.Second, 100 * time.Millisecond})
			for !ap.done() {
				if ctx.Err() != nil {
					t.Fatalf("reader a held at event time %v though b read all its %d messages (at %v)", ap.eventTime(0), c.n[1], ap.eventTime(1))
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}
