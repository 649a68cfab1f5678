package broker

import (
	"errors"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/sqlerr"
)

// NATS failures reach clients with the SQLSTATE a PostgreSQL user would
// look for, never as XX000:
//
//   - JetStream out of storage (insufficient resources, storage resources
//     exceeded, a store that found the disk full): 53100 disk_full.
//   - A limit of the account or of the JetStream stream (max bytes,
//     max messages with discard new): 53400 configuration_limit_exceeded.
//   - A message over the stream's or server's size limit: 54000.
//   - NATS unreachable or JetStream not answering (connection closed or
//     reconnecting, no responders, JetStream disabled): 08006
//     connection_failure, the class drivers and pools treat as "try again
//     later". Nothing was written.
//   - No acknowledgement in time: 08007 transaction_resolution_unknown,
//     since the message may have been stored (see Outcome).
//   - Any other failure of JetStream's store: 58030 io_error.

// Classify returns the *sqlerr.Error that a NATS or JetStream error
// stands for, or nil when err is not one. what names the operation for
// the message ("publish to table t").
func Classify(err error, what string) *sqlerr.Error {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return classifyAPI(api, what)
	}
	switch {
	case errors.Is(err, nats.ErrTimeout):
		return sqlerr.New(sqlerr.TransactionResolutionUnknown, "%s: NATS JetStream did not answer in time, so it is not known whether the write was stored", what).
			WithHint("Check that NATS is running and has room; read the data back before retrying a write that must not be repeated.")
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse),
		errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		return sqlerr.New(sqlerr.ConnectionFailure, "%s: NATS JetStream is not available (%s)", what, natsText(err)).
			WithHint("Nothing was written. Check that the NATS server runs with JetStream enabled, then retry.")
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrNoServers),
		errors.Is(err, nats.ErrDisconnected), errors.Is(err, nats.ErrConnectionReconnecting),
		errors.Is(err, nats.ErrConnectionDraining), errors.Is(err, nats.ErrInvalidConnection),
		errors.Is(err, nats.ErrStaleConnection), errors.Is(err, nats.ErrReconnectBufExceeded):
		return sqlerr.New(sqlerr.ConnectionFailure, "%s: the connection to NATS is lost (%s)", what, natsText(err)).
			WithHint("Nothing was written. streamdb reconnects by itself; retry once NATS is reachable.")
	}
	return nil
}

func classifyAPI(api *jetstream.APIError, what string) *sqlerr.Error {
	desc := api.Description
	switch {
	case api.ErrorCode == 10023 || api.ErrorCode == 10047 || strings.Contains(desc, "no space left"):
		return sqlerr.New(sqlerr.DiskFull, "%s: NATS JetStream has no storage left (%s)", what, desc).
			WithHint("Nothing was written. Free space on the disk holding JetStream's store; writes go on by themselves once there is room.")
	case api.ErrorCode == 10002 || strings.Contains(desc, "maximum bytes exceeded") || strings.Contains(desc, "maximum messages"):
		return sqlerr.New(sqlerr.ConfigurationLimitExceeded, "%s: a JetStream limit is reached (%s)", what, desc).
			WithHint("Nothing was written. Raise the JetStream stream's or account's limits, or remove old messages.")
	case api.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum:
		return sqlerr.New(sqlerr.ProgramLimitExceeded, "%s: the message is larger than JetStream allows (%s)", what, desc).
			WithHint("Write fewer or smaller rows per statement.")
	case api.ErrorCode == jetstream.JSErrCodeJetStreamNotEnabled || api.ErrorCode == jetstream.JSErrCodeJetStreamNotEnabledForAccount || api.Code == 503:
		return sqlerr.New(sqlerr.ConnectionFailure, "%s: NATS JetStream is not available (%s)", what, desc).
			WithHint("Nothing was written. Check that the NATS server runs with JetStream enabled, then retry.")
	case api.ErrorCode == jetstream.JSErrCodeStreamNotFound:
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "%s: its JetStream stream no longer exists", what).
			WithHint("Someone deleted it outside streamdb; recreate the object.")
	}
	return sqlerr.New(sqlerr.IOError, "%s: NATS JetStream refused the write (%s)", what, desc)
}

// natsText is err's message without the "nats: " prefix of the client
// library.
func natsText(err error) string {
	return strings.TrimPrefix(err.Error(), "nats: ")
}

func init() {
	sqlerr.Classify(func(err error) *sqlerr.Error {
		e := Classify(err, "a request to NATS failed")
		if e != nil {
			e.Detail = err.Error()
		}
		return e
	})
}
