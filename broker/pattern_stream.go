package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// SubjectConflictError says why no single JetStream stream can hold every
// subject a pattern matches. A stream reads one JetStream stream, whose
// sequence is its position, and JetStream stores each subject in at most
// one stream: the pattern's subjects must all be in the same one.
type SubjectConflictError struct {
	Pattern string
	Streams []string // the JetStream streams holding subjects it matches
	Msg     string
}

func (e *SubjectConflictError) Error() string { return e.Msg }

// ensurePatternStream returns the JetStream stream that holds every
// subject pattern matches:
//   - a stream one of whose subjects covers the pattern (orders.> covers
//     orders.*.created) is bound;
//   - with no stream holding any subject the pattern matches, one is
//     created for the pattern;
//   - a single stream streamdb created for a stream (not a table's
//     changelog) that holds only some of them (orders.eu.created, made by
//     an earlier CREATE STREAM) is widened to the pattern: the subjects it
//     covers are replaced by the pattern, its messages and sequences are
//     kept, and the streams reading it read as before;
//   - anything else (a table's changelog, a stream streamdb did not
//     create, several streams) is a SubjectConflictError.
func (b *Broker) ensurePatternStream(ctx context.Context, sqlName, pattern string) (string, bool, error) {
	var names []string
	list := b.JS.StreamNames(ctx, jetstream.WithStreamListSubject(pattern))
	for n := range list.Name() {
		names = append(names, n)
	}
	if err := list.Err(); err != nil {
		return "", false, fmt.Errorf("look up JetStream streams for subject %q: %w", pattern, err)
	}
	slices.Sort(names)
	switch len(names) {
	case 0:
		return b.createStream(ctx, sqlName, pattern, nil)
	case 1:
	default:
		return "", false, &SubjectConflictError{Pattern: pattern, Streams: names,
			Msg: fmt.Sprintf("subject pattern %q matches subjects held by several JetStream streams (%s)", pattern, strings.Join(names, ", "))}
	}
	s, err := b.JS.Stream(ctx, names[0])
	if err != nil {
		return "", false, fmt.Errorf("read JetStream stream %s: %w", names[0], err)
	}
	cfg := s.CachedInfo().Config
	for _, subj := range cfg.Subjects {
		if SubjectCovers(subj, pattern) {
			return cfg.Name, false, nil
		}
	}
	_, table := cfg.Metadata[TableMetadataKey]
	switch {
	case table || cfg.Name == TxnStream:
		return "", false, &SubjectConflictError{Pattern: pattern, Streams: names,
			Msg: fmt.Sprintf("subject pattern %q matches subjects of streamdb's own JetStream stream %s", pattern, cfg.Name)}
	case !strings.HasPrefix(cfg.Name, "streamdb_"):
		return "", false, &SubjectConflictError{Pattern: pattern, Streams: names,
			Msg: fmt.Sprintf("subject pattern %q matches subjects of JetStream stream %s (subjects %s), which holds only some of them", pattern, cfg.Name, strings.Join(cfg.Subjects, ", "))}
	}
	subjects := []string{pattern}
	for _, subj := range cfg.Subjects {
		if !SubjectCovers(pattern, subj) {
			subjects = append(subjects, subj)
		}
	}
	cfg.Subjects = subjects
	if _, err := b.JS.UpdateStream(ctx, cfg); err != nil {
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) {
			return "", false, &SubjectConflictError{Pattern: pattern, Streams: names,
				Msg: fmt.Sprintf("subject pattern %q: widening JetStream stream %s to it failed: %v", pattern, cfg.Name, err)}
		}
		return "", false, fmt.Errorf("widen JetStream stream %s to subject %q: %w", cfg.Name, pattern, err)
	}
	return cfg.Name, false, nil
}
