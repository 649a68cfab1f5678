package cluster

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// isWrongRevision reports a compare-and-set that found another revision
// (the entry expired, was deleted, or another writer wrote it).
func isWrongRevision(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
