package sqlerr

import (
	"errors"
	"fmt"
	"testing"
)

var errFull = errors.New("disk full")

func init() {
	Classify(func(err error) *Error {
		if errors.Is(err, errFull) {
			return New(DiskFull, "full").WithHint("free space")
		}
		return nil
	})
}

func TestClassifiedCauses(t *testing.T) {
	wrapped := fmt.Errorf("write chk: %w", errFull)
	if got := From(wrapped); got.Code != DiskFull {
		t.Errorf("From(%v).Code = %s, want %s", wrapped, got.Code, DiskFull)
	}
	// An internal error made from a known cause takes its class.
	e := New(InternalError, "checkpoint 6 failed: %v", wrapped)
	if e.Code != DiskFull || e.Hint != "free space" || e.Message != "checkpoint 6 failed: write chk: disk full" {
		t.Errorf("New(XX000, cause) = %+v, want code %s, the cause's hint, the wrapper's message", e, DiskFull)
	}
	inner := New(ConnectionFailure, "nats down")
	if e := New(InternalError, "create stream: %v", inner); e.Code != ConnectionFailure {
		t.Errorf("New(XX000, *Error 08006).Code = %s, want 08006", e.Code)
	}
	// Unknown causes and other codes stay as they are.
	if e := New(InternalError, "x: %v", errors.New("boom")); e.Code != InternalError {
		t.Errorf("unknown cause: code %s, want XX000", e.Code)
	}
	if e := New(SyntaxError, "x: %v", wrapped); e.Code != SyntaxError {
		t.Errorf("explicit code: %s, want 42601", e.Code)
	}
	if got := From(errors.New("boom")); got.Code != InternalError {
		t.Errorf("From(unknown).Code = %s, want XX000", got.Code)
	}
}
