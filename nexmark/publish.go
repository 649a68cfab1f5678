package nexmark

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultSubjects are the JetStream subjects of person, auction and bid
// events, indexed by Kind.
var DefaultSubjects = [3]string{"nexmark.person", "nexmark.auction", "nexmark.bid"}

// Count returns how many of events [0, events) are of kind k.
func Count(k Kind, events uint64) uint64 {
	blocks, r := events/proportionDenom, events%proportionDenom
	switch k {
	case KindPerson:
		return blocks*personProportion + min(r, personProportion)
	case KindAuction:
		return blocks*auctionProportion + min(r-min(r, personProportion), auctionProportion)
	default:
		return blocks*bidProportion + r - min(r, personProportion+auctionProportion)
	}
}

// PublishOptions says what Publish sends.
type PublishOptions struct {
	// Subjects by Kind; empty entries take DefaultSubjects.
	Subjects [3]string
	// First and Events: publish events First .. First+Events-1.
	First, Events uint64
	// Rate is the publish rate in events/s over all kinds; 0 publishes
	// flat out. Event n is sent no earlier than start + (n-First)/Rate.
	Rate int
	// MaxPending bounds unacknowledged async publishes per connection;
	// default 4096.
	MaxPending int
	// NoAck publishes plain NATS messages instead of acknowledged
	// JetStream publishes. JetStream still stores them (the subjects belong
	// to streams), but the publisher neither waits for nor parses one
	// acknowledgement per event, which costs it about 3x the CPU of the
	// publishing itself: on a shared machine that CPU is taken from the
	// server being measured. Without acknowledgements nothing slows a
	// publisher down when JetStream falls behind, so use it at steady rates
	// the server keeps up with. Publish ends by checking that each stream
	// grew by at least the events sent (other publishers to the same
	// subjects can hide a loss from that check).
	NoAck bool
	// Progress, when set, counts events handed to a connection (not yet
	// acknowledged: publishes are asynchronous).
	Progress *atomic.Int64
}

// PublishStats says what Publish sent.
type PublishStats struct {
	Events  [3]uint64 // by Kind
	Bytes   uint64    // JSON payload bytes
	Elapsed time.Duration
}

// Publish sends events to JetStream over one NATS connection per kind, with
// asynchronous acknowledged publishes, so each subject receives its events
// in event order (and so in timestamp order). It returns once every publish
// is acknowledged, or on the first error, or when ctx ends (then with the
// events sent so far and ctx's error).
func Publish(ctx context.Context, natsURL string, g *Generator, opt PublishOptions) (PublishStats, error) {
	for k := range opt.Subjects {
		if opt.Subjects[k] == "" {
			opt.Subjects[k] = DefaultSubjects[k]
		}
	}
	if opt.MaxPending <= 0 {
		opt.MaxPending = 4096
	}
	var st PublishStats
	var bytes atomic.Uint64
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for k := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n uint64
			n, errs[k] = publishKind(ctx, natsURL, g, Kind(k), opt, start, &bytes)
			st.Events[k] = n
		}()
	}
	wg.Wait()
	st.Elapsed = time.Since(start)
	st.Bytes = bytes.Load()
	return st, errors.Join(errs...)
}

func publishKind(ctx context.Context, url string, g *Generator, k Kind, opt PublishOptions, start time.Time, bytes *atomic.Uint64) (uint64, error) {
	nc, err := nats.Connect(url, nats.Name("streamdb-nexmark-"+k.String()))
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	var failed atomic.Int64
	var lastErr atomic.Value
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncMaxPending(opt.MaxPending),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
			failed.Add(1)
			lastErr.Store(err)
		}))
	if err != nil {
		return 0, err
	}
	subject := opt.Subjects[k]
	var before uint64
	if opt.NoAck {
		st, err := streamState(ctx, js, subject)
		if err != nil {
			return 0, err
		}
		before = st.LastSeq
	}
	var sent, size uint64
	var buf []byte
	end := opt.First + opt.Events
	for n := opt.First; n < end; n++ {
		if KindOf(n) != k {
			continue
		}
		if ctx.Err() != nil {
			return sent, ctx.Err()
		}
		if opt.Rate > 0 {
			due := start.Add(time.Duration(float64(n-opt.First) / float64(opt.Rate) * float64(time.Second)))
			// Sleep only when a millisecond or more ahead of schedule:
			// timers are too coarse for one sleep per event at 50k/s.
			if d := time.Until(due); d >= time.Millisecond {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return sent, ctx.Err()
				}
			}
		}
		if opt.NoAck {
			// Publish copies the data into the connection's buffer.
			buf = g.AppendJSON(buf[:0], n)
			err = nc.Publish(subject, buf)
		} else {
			// PublishAsync copies nothing: the message keeps its data until
			// it is acknowledged, so each event needs its own buffer.
			buf = g.AppendJSON(make([]byte, 0, len(buf)+64), n)
			err = publishAsync(js, subject, buf)
		}
		if err != nil {
			return sent, fmt.Errorf("publish to %s: %w", subject, err)
		}
		sent++
		size += uint64(len(buf))
		if opt.Progress != nil {
			opt.Progress.Add(1)
		}
	}
	bytes.Add(size)
	if opt.NoAck {
		return sent, waitStreamGrowth(ctx, nc, js, subject, before, sent)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		return sent, ctx.Err()
	case <-time.After(5 * time.Minute):
		return sent, fmt.Errorf("%s: %d publishes not acknowledged within 5 minutes", subject, js.PublishAsyncPending())
	}
	if n := failed.Load(); n > 0 {
		return sent, fmt.Errorf("%s: %d publishes failed, last: %v", subject, n, lastErr.Load())
	}
	return sent, nil
}

// publishAsync publishes data without waiting for its acknowledgement,
// waiting out a full window of pending ones first.
func publishAsync(js jetstream.JetStream, subject string, data []byte) error {
	for tries := 0; ; tries++ {
		_, err := js.PublishAsync(subject, data)
		if err == nil || !errors.Is(err, jetstream.ErrTooManyStalledMsgs) || tries > 10_000 {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// streamState returns the state (message count, sequences) of the stream
// that holds subject.
func streamState(ctx context.Context, js jetstream.JetStream, subject string) (jetstream.StreamState, error) {
	name, err := js.StreamNameBySubject(ctx, subject)
	if err != nil {
		return jetstream.StreamState{}, fmt.Errorf("look up the stream of %s: %w", subject, err)
	}
	st, err := js.Stream(ctx, name)
	if err != nil {
		return jetstream.StreamState{}, fmt.Errorf("stream %s: %w", name, err)
	}
	return st.CachedInfo().State, nil
}

// waitStreamGrowth waits until the stream of subject has stored at least
// sent messages after sequence before: unacknowledged publishes that
// reached the server may still be queued for the stream. It gives up when
// the stream stops growing for stallTimeout short of that.
func waitStreamGrowth(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, subject string, before, sent uint64) error {
	if err := nc.FlushTimeout(time.Minute); err != nil {
		return fmt.Errorf("flush publishes to %s: %w", subject, err)
	}
	const stallTimeout = 5 * time.Second
	seen, since := before, time.Now()
	for {
		st, err := streamState(ctx, js, subject)
		if err != nil {
			return err
		}
		last := st.LastSeq
		if last-before >= sent {
			return nil
		}
		if last != seen {
			seen, since = last, time.Now()
		} else if time.Since(since) > stallTimeout {
			return fmt.Errorf("%s: the stream stored %d of the %d events published without acknowledgement", subject, last-before, sent)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// EnsureStreams creates a JetStream stream (file storage) named
// nexmark_<kind> for each subject no stream holds yet. streamdb's CREATE
// STREAM adopts an existing stream that holds its subject.
func EnsureStreams(ctx context.Context, natsURL string, subjects [3]string) error {
	nc, err := nats.Connect(natsURL, nats.Name("streamdb-nexmark-setup"))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	for k, subj := range subjects {
		if subj == "" {
			subj = DefaultSubjects[k]
		}
		if _, err := js.StreamNameBySubject(ctx, subj); err == nil {
			continue
		} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("look up the stream of %s: %w", subj, err)
		}
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
			Name: "nexmark_" + Kind(k).String(), Subjects: []string{subj}, Storage: jetstream.FileStorage,
		}); err != nil {
			return fmt.Errorf("create a JetStream stream for %s: %w", subj, err)
		}
	}
	return nil
}
