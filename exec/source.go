package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/storage"
)

// ErrInputLost means JetStream no longer holds input a view needs.
var ErrInputLost = errors.New("input no longer retained")

// chunkRows is how many rows a source gathers before it sends a chunk
// without waiting for the next barrier.
const chunkRows = 1024

// sourceReader owns one JetStream ordered consumer for one input of one
// pipeline. It decodes messages into rows, sends them downstream in chunks,
// and turns barrier requests into in-band barriers that carry the stream
// sequence of the last message sent before them.
type sourceReader struct {
	idx      uint16
	name     string // SQL stream name, for logs
	jsStream string
	subject  string
	decoder  messageDecoder
	broker   *broker.Broker
	rt       *Runtime
	log      *slog.Logger

	pos      storage.SourcePosition // position of the last message sent
	barriers chan uint64
	out      chan<- pipelineMsg
	// skippedTotal mirrors pos.Skipped for readers outside the goroutine.
	skippedTotal atomic.Uint64
}

func (s *sourceReader) run(ctx context.Context) error {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{s.subject}}
	// The input after the recorded position must still be there, or the
	// view would silently miss it. (New views start at the oldest retained
	// message, recorded as the position before it.)
	first, err := s.broker.FirstSeq(ctx, s.jsStream)
	if err != nil {
		return err
	}
	if first > s.pos.Seq+1 {
		return fmt.Errorf("%w: resuming needs JetStream stream %s from sequence %d, but it retains only sequences from %d on; messages %d..%d are gone (raise the stream's retention, or move the source with ALTER STREAM %s SET POSITION)",
			ErrInputLost, s.jsStream, s.pos.Seq+1, first, s.pos.Seq+1, first-1, s.name)
	}
	if s.pos.Seq > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = s.pos.Seq + 1
	}
	cons, err := s.broker.JS.OrderedConsumer(ctx, s.jsStream, cfg)
	if err != nil {
		return err
	}
	msgs := make(chan jetstream.Msg, 4096)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		select {
		case msgs <- m:
		case <-ctx.Done():
		}
	})
	if err != nil {
		return err
	}
	defer cc.Stop()

	chunk := &Chunk{}
	send := func(m pipelineMsg) bool {
		select {
		case s.out <- m:
			return true
		case <-ctx.Done():
			return false
		}
	}
	flush := func() bool {
		if chunk.Len() == 0 {
			return true
		}
		c := chunk
		chunk = &Chunk{}
		return send(pipelineMsg{src: s.idx, chunk: c})
	}
	for {
		in := msgs
		if s.rt.Paused() {
			in = nil // ALTER SYSTEM PAUSE: barriers pass, input waits
		}
		pauseChanged := s.rt.pauseSignal()
		select {
		case <-ctx.Done():
			return nil
		case <-pauseChanged:
		case m := <-in:
			meta, err := m.Metadata()
			if err != nil {
				s.log.Warn("message without JetStream metadata", "stream", s.name, "err", err)
				continue
			}
			if meta.Sequence.Stream <= s.pos.Seq {
				continue // redelivery after a consumer reset
			}
			s.pos.Seq = meta.Sequence.Stream
			if err := s.decoder.decodeInto(m.Data(), chunk); err != nil {
				s.pos.Skipped++
				s.skippedTotal.Store(s.pos.Skipped)
				if s.pos.Skipped <= 10 || s.pos.Skipped%1000 == 0 {
					s.log.Warn("skipping malformed message", "stream", s.name, "seq", s.pos.Seq, "skipped", s.pos.Skipped, "err", err)
				}
				continue
			}
			if chunk.Len() >= chunkRows && !flush() {
				return nil
			}
		case e := <-s.barriers:
			if !flush() || !send(pipelineMsg{src: s.idx, barrier: e, pos: s.pos}) {
				return nil
			}
		}
	}
}
