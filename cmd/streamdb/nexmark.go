package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"streamdb/nexmark"
)

// nexmarkCommand runs `streamdb nexmark`: it generates Nexmark events and
// publishes them to JetStream (one subject per kind) or writes them to a
// JSON-lines file.
func nexmarkCommand(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("streamdb nexmark", flag.ContinueOnError)
	natsURL := fs.String("nats-url", "nats://127.0.0.1:4222", "NATS server to publish to")
	events := fs.Uint64("events", 1_000_000, "number of events to generate")
	first := fs.Uint64("first", 0, "number of the first event (to continue an earlier run)")
	rate := fs.Int("rate", 0, "publish rate in events/s over all kinds; 0 = flat out")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same events")
	eventRate := fs.Int("event-rate", 10_000, "event-time rate: events per second of date_time")
	outPath := fs.String("out", "", "write JSON lines to this file ('-' = stdout) instead of publishing")
	ack := fs.Bool("ack", true, "wait for JetStream to acknowledge each publish; --ack=false sends plain NATS publishes (a third of the CPU, no backpressure: for steady rates) and checks at the end that the streams grew by the events sent")
	createStreams := fs.Bool("create-streams", true, "create JetStream streams for subjects that have none")
	var subjects [3]string
	fs.StringVar(&subjects[nexmark.KindPerson], "person-subject", nexmark.DefaultSubjects[nexmark.KindPerson], "subject of person events")
	fs.StringVar(&subjects[nexmark.KindAuction], "auction-subject", nexmark.DefaultSubjects[nexmark.KindAuction], "subject of auction events")
	fs.StringVar(&subjects[nexmark.KindBid], "bid-subject", nexmark.DefaultSubjects[nexmark.KindBid], "subject of bid events")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: streamdb nexmark [flags]

Generates the Nexmark auction workload (1 person, 3 auctions, 46 bids in
every 50 events; timestamps as epoch milliseconds) and publishes it as JSON,
or with --out writes lines {"event_type":"bid","bid":{...}}. Declare the
streams with, e.g.:

  CREATE STREAM bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR,
    url VARCHAR, date_time TIMESTAMP, extra VARCHAR,
    WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) WITH (subject = 'nexmark.bid');`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *rate < 0 || *eventRate <= 0 {
		return fmt.Errorf("--rate must be >= 0 and --event-rate > 0")
	}
	g := nexmark.NewGenerator(nexmark.Config{Seed: *seed, EventRate: *eventRate})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *outPath != "" {
		return writeNexmarkFile(ctx, g, *outPath, *first, *events, *rate, out)
	}
	if *createStreams {
		if err := nexmark.EnsureStreams(ctx, *natsURL, subjects); err != nil {
			return err
		}
	}
	st, err := nexmark.Publish(ctx, *natsURL, g, nexmark.PublishOptions{
		Subjects: subjects, First: *first, Events: *events, Rate: *rate, NoAck: !*ack,
	})
	total := st.Events[0] + st.Events[1] + st.Events[2]
	fmt.Fprintf(out, "published %d events (%d persons, %d auctions, %d bids, %.1f MB) in %v: %.0f events/s\n",
		total, st.Events[0], st.Events[1], st.Events[2], float64(st.Bytes)/1e6,
		st.Elapsed.Round(time.Millisecond), float64(total)/st.Elapsed.Seconds())
	return err
}

// writeNexmarkFile writes events as JSON lines, each wrapped as
// {"event_type":KIND,KIND:{...}}.
func writeNexmarkFile(ctx context.Context, g *nexmark.Generator, path string, first, events uint64, rate int, out io.Writer) error {
	var f *os.File
	if path == "-" {
		f = os.Stdout
	} else {
		var err error
		if f, err = os.Create(path); err != nil {
			return err
		}
		defer f.Close()
	}
	w := bufio.NewWriterSize(f, 1<<20)
	start := time.Now()
	var line []byte
	for n := first; n < first+events; n++ {
		if (n-first)%1024 == 0 {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if rate > 0 {
				due := start.Add(time.Duration(float64(n-first) / float64(rate) * float64(time.Second)))
				if d := time.Until(due); d > 0 {
					if err := w.Flush(); err != nil {
						return err
					}
					time.Sleep(d)
				}
			}
		}
		k := nexmark.KindOf(n).String()
		line = append(line[:0], `{"event_type":"`...)
		line = append(line, k...)
		line = append(line, `","`...)
		line = append(line, k...)
		line = append(line, `":`...)
		line = g.AppendJSON(line, n)
		line = append(line, "}\n"...)
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if path != "-" {
		fmt.Fprintf(out, "wrote %d events to %s in %v\n", events, path, time.Since(start).Round(time.Millisecond))
	}
	return nil
}
