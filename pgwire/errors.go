package pgwire

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/sqlerr"
)

var (
	// errCanceled is the cause of a query context cancelled by a
	// CancelRequest.
	errCanceled = &sqlerr.Error{Code: sqlerr.QueryCanceled, Message: "canceling statement due to user request"}
	// errShutdown is the cause of every context cancelled by
	// Server.Shutdown; it is always sent with severity FATAL.
	errShutdown = &sqlerr.Error{Code: sqlerr.AdminShutdown, Message: "terminating connection due to administrator command"}
)

// errorResponse builds the ErrorResponse for e with the given severity
// (ERROR or FATAL).
func errorResponse(e *sqlerr.Error, severity string) *pgproto3.ErrorResponse {
	code := e.Code
	if code == "" {
		code = sqlerr.InternalError
	}
	return &pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                code,
		Message:             e.Message,
		Detail:              e.Detail,
		Hint:                e.Hint,
		Position:            int32(e.Position),
	}
}

// inputError gives an error from a types input function (types.ParseText,
// types.CheckIntRange) its SQLSTATE.
func inputError(err error) error {
	if sqlerr.Code(err) != "" {
		return err
	}
	code := sqlerr.InvalidTextRepresentation
	if strings.Contains(err.Error(), "out of range") {
		code = sqlerr.NumericValueOutOfRange
	}
	return &sqlerr.Error{Code: code, Message: err.Error()}
}

// shiftPosition moves the error position of err, relative to a statement
// that starts at rune offset runes of the client's query string, so that it
// is relative to the whole string as the client expects. The engine's error
// value is copied, never modified.
func shiftPosition(err error, runes int) error {
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Position == 0 || runes == 0 || e == errCanceled || e == errShutdown {
		return err
	}
	shifted := *e
	shifted.Position += runes
	return &shifted
}
