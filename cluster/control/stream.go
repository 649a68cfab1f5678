// Package control is the cluster's control log: the JetStream stream
// SDB_CTL_<cluster> to which the coordinator appends what the cluster has
// decided (barriers with each source stream's cut, commits, checkpoints,
// restores and placement changes), and from which any server, or a
// replay, reads those decisions back in order. docs/cluster.md writes the
// protocol down.
//
// One coordinator appends: the holder of the cluster's coordinator lease
// (package ha, bucket ha.Bucket(LeaseGroup(cluster))). The lease alone
// does not fence a coordinator that was paused past its lease and wakes
// between its lease check and its append, so every append also carries
// Nats-Expected-Last-Sequence, the stream sequence the writer last saw:
// once another coordinator has appended, the paused one's append fails
// and its Writer refuses every later append (Writer.append).
//
// Durability. The stream is file-stored with the replicas the caller asks
// for (R3 on a three-node NATS cluster: a record is acknowledged once a
// quorum stored it). JetStream fsyncs only every sync_interval (two
// minutes by default), so, as for tables' changelogs (broker/sync.go),
// the writer publishes through the JetStream context the caller gives:
// the server passes broker.Broker.JS, which on the embedded NATS server
// fsyncs the stream before it reports a record acknowledged, and on an
// external NATS cluster relies on `jetstream { sync_interval: always }`,
// which the broker checks at connect and warns about when it cannot tell.
package control

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/nats-io/nats.go/jetstream"
)

var clusterName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,48}$`)

// ValidateCluster checks a cluster name: it is part of a JetStream stream
// name, a subject token and a key-value bucket name.
func ValidateCluster(cluster string) error {
	if !clusterName.MatchString(cluster) {
		return fmt.Errorf("cluster name %q: use 1 to 48 letters, digits, '-' or '_'", cluster)
	}
	return nil
}

// StreamName is the control stream of a cluster.
func StreamName(cluster string) string { return "SDB_CTL_" + cluster }

// SubjectPrefix is the prefix of every subject of a cluster's control
// stream; each record kind has its own subject under it, so that the
// newest record of a kind is one lookup (GetLastMsgForSubject) while the
// expected last sequence of an append still covers the whole stream.
func SubjectPrefix(cluster string) string { return "$SDB.ctl." + cluster }

// Subject is the subject records of kind are appended to.
func Subject(cluster string, kind Kind) string { return SubjectPrefix(cluster) + "." + string(kind) }

// LeaseGroup is the ha group whose lease makes its holder the cluster's
// coordinator (bucket ha.Bucket(LeaseGroup(cluster))).
func LeaseGroup(cluster string) string { return cluster + "_coordinator" }

// EnsureStream binds the cluster's control stream, creating it (file
// storage, replicas copies) when it does not exist. An existing stream
// with other replicas is used as it is: changing it is a cluster-wide
// operation that an operator makes on purpose.
func EnsureStream(ctx context.Context, js jetstream.JetStream, cluster string, replicas int) (jetstream.Stream, error) {
	if err := ValidateCluster(cluster); err != nil {
		return nil, err
	}
	s, err := js.Stream(ctx, StreamName(cluster))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = js.CreateStream(ctx, jetstream.StreamConfig{
			Name:        StreamName(cluster),
			Description: "streamdb cluster control log (docs/cluster.md)",
			Subjects:    []string{SubjectPrefix(cluster) + ".>"},
			Storage:     jetstream.FileStorage,
			Replicas:    max(1, replicas),
			// Records are the cluster's history: never dropped for space
			// or age (a later step purges below the oldest retained
			// checkpoint).
			Discard: jetstream.DiscardNew,
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = js.Stream(ctx, StreamName(cluster))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("control stream %s: %w", StreamName(cluster), err)
	}
	return s, nil
}
