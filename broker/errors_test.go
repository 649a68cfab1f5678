package broker

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/sqlerr"
)

func TestClassify(t *testing.T) {
	api := func(code int, errCode jetstream.ErrorCode, desc string) error {
		return fmt.Errorf("publish: %w", &jetstream.APIError{Code: code, ErrorCode: errCode, Description: desc})
	}
	for _, c := range []struct {
		err  error
		code string
	}{
		{api(503, 10023, "insufficient resources"), sqlerr.DiskFull},
		{api(500, 10047, "insufficient storage resources available"), sqlerr.DiskFull},
		{api(503, 10077, "write /x/1.blk: no space left on device"), sqlerr.DiskFull},
		{api(400, 10002, "resource limits exceeded for account"), sqlerr.ConfigurationLimitExceeded},
		{api(503, 10077, "maximum bytes exceeded"), sqlerr.ConfigurationLimitExceeded},
		{api(400, 10054, "message size exceeds maximum allowed"), sqlerr.ProgramLimitExceeded},
		{api(503, 10076, "jetstream not enabled"), sqlerr.ConnectionFailure},
		{api(404, 10059, "stream not found"), sqlerr.ObjectNotInPrerequisiteState},
		{api(500, 10077, "bad checksum"), sqlerr.IOError},
		{fmt.Errorf("x: %w", nats.ErrNoResponders), sqlerr.ConnectionFailure},
		{jetstream.ErrNoStreamResponse, sqlerr.ConnectionFailure},
		{nats.ErrConnectionClosed, sqlerr.ConnectionFailure},
		{nats.ErrReconnectBufExceeded, sqlerr.ConnectionFailure},
		{nats.ErrTimeout, sqlerr.TransactionResolutionUnknown},
	} {
		e := Classify(c.err, "could not write to table \"t\"")
		if e == nil || e.Code != c.code {
			t.Errorf("Classify(%v) = %v, want SQLSTATE %s", c.err, e, c.code)
		}
		// Registered with sqlerr, so any NATS error on its way to a
		// client gets the same code.
		if got := sqlerr.From(c.err); got.Code != c.code {
			t.Errorf("sqlerr.From(%v).Code = %s, want %s", c.err, got.Code, c.code)
		}
	}
	if e := Classify(context.Canceled, "x"); e != nil {
		t.Errorf("Classify(context.Canceled) = %v, want nil (not a NATS error)", e)
	}
}
