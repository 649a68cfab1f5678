// Package sqlerr is the error type that carries a PostgreSQL SQLSTATE from
// wherever an error is found (parser, binder, executor) to the wire.
package sqlerr

import (
	"errors"
	"fmt"
)

// SQLSTATE codes used by streamdb.
const (
	SyntaxError                       = "42601"
	UndefinedTable                    = "42P01"
	UndefinedColumn                   = "42703"
	UndefinedFunction                 = "42883"
	UndefinedObject                   = "42704"
	DuplicateTable                    = "42P07"
	DuplicateObject                   = "42710"
	DatatypeMismatch                  = "42804"
	GroupingError                     = "42803"
	AmbiguousColumn                   = "42702"
	DependentObjectsExist             = "2BP01"
	FeatureNotSupported               = "0A000"
	InvalidParameterValue             = "22023"
	InvalidTextRepresentation         = "22P02"
	NumericValueOutOfRange            = "22003"
	DivisionByZero                    = "22012"
	DataException                     = "22000"
	ProtocolViolation                 = "08P01"
	QueryCanceled                     = "57014"
	AdminShutdown                     = "57P01"
	CannotConnectNow                  = "57P03"
	InternalError                     = "XX000"
	ObjectNotInPrerequisiteState      = "55000"
	WrongObjectType                   = "42809"
	InvalidName                       = "42602"
	NameTooLong                       = "42622"
	UndefinedParameter                = "42P02"
	CantChangeRuntimeParam            = "55P02"
	ConfigFileError                   = "F0000"
	InsufficientResources             = "53000"
	InvalidTransactionState           = "25000"
	ReadOnlySQLTransaction            = "25006"
	InFailedSQLTransaction            = "25P02"
	SerializationFailure              = "40001"
	ProgramLimitExceeded              = "54000"
	StatementTooComplex               = "54001"
	OutOfMemory                       = "53200"
	TooManyConnections                = "53300"
	IdleInTransactionTimeout          = "25P03"
	TransactionResolutionUnknown      = "08007"
	ConnectionFailure                 = "08006"
	DiskFull                          = "53100"
	ConfigurationLimitExceeded        = "53400"
	IOError                           = "58030"
	UndefinedFile                     = "58P01"
	CardinalityViolation              = "21000"
	StringDataRightTruncation         = "22001"
	DatetimeFieldOverflow             = "22008"
	InvalidRegularExpression          = "2201B"
	InvalidEscapeSequence             = "22025"
	InvalidArgumentForLogarithm       = "2201E"
	InvalidArgumentForWidthBucket     = "2201G"
	NullValueNotAllowed               = "22004"
	InvalidPrecedingOrFollowingSize   = "22013"
	InvalidArgumentForNtile           = "22014"
	ArraySubscriptError               = "2202E"
	InvalidArgumentForNthValue        = "22016"
	InvalidArgumentForPowerFunction   = "2201F"
	InvalidRowCountInLimitClause      = "2201W"
	InvalidRowCountInResultOffset     = "2201X"
	InvalidAuthorizationSpecification = "28000"
	InvalidSchemaName                 = "3F000"
	AmbiguousFunction                 = "42725"
	DuplicateColumn                   = "42701"
	DuplicateAlias                    = "42712"
	CannotCoerce                      = "42846"
	InvalidColumnReference            = "42P10"
	WindowingError                    = "42P20"
	ObjectInUse                       = "55006"
	InvalidDatetimeFormat             = "22007"
	InvalidTimeZoneDisplacement       = "22009"
	IntervalFieldOverflow             = "22015"
	CharacterNotInRepertoire          = "22021"
	InvalidBinaryRepresentation       = "22P03"
	BadCopyFileFormat                 = "22P04"
	UntranslatableCharacter           = "22P05"
	NotNullViolation                  = "23502"
	UniqueViolation                   = "23505"
	ForeignKeyViolation               = "23503"
	CheckViolation                    = "23514"
	InvalidForeignKey                 = "42830"
	InvalidSQLStatementName           = "26000"
	InvalidPassword                   = "28P01"
	InvalidCursorName                 = "34000"
	InvalidSavepointSpecification     = "3B001"
	ActiveSQLTransaction              = "25001"
	NoActiveSQLTransaction            = "25P01"
	SubstringError                    = "22011"
	InvalidGrantOperation             = "0LP01"
	InsufficientPrivilege             = "42501"
	DuplicateCursor                   = "42P03"
	DuplicatePreparedStatement        = "42P05"
	InvalidTableDefinition            = "42P16"
	InvalidObjectDefinition           = "42P17"
	DuplicateSchema                   = "42P06"
	ReservedName                      = "42939"
	InvalidRecursion                  = "42P19"
	DataCorrupted                     = "XX001"
)

// Error is an error with a SQLSTATE. Position, when non-zero, is a 1-based
// character offset into the statement text, as in PostgreSQL's ErrorResponse.
type Error struct {
	Code     string
	Message  string
	Detail   string
	Hint     string
	Position int
}

func (e *Error) Error() string { return e.Message }

// New returns an error with the given SQLSTATE and formatted message.
//
// An InternalError made from an error argument whose class is known (an
// *Error with another code, or one a classifier knows: a full disk, a
// NATS failure) takes that error's SQLSTATE and hint instead: the
// wrapper says where it happened, the cause says what kind of failure
// it is.
func New(code, format string, args ...any) *Error {
	e := &Error{Code: code, Message: fmt.Sprintf(format, args...)}
	if code == InternalError {
		for _, a := range args {
			if cause := knownCause(a); cause != nil {
				e.Code, e.Hint = cause.Code, cause.Hint
				break
			}
		}
	}
	return e
}

// knownCause returns the class of a, when a is an error with one.
func knownCause(a any) *Error {
	err, ok := a.(error)
	if !ok || err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Code != InternalError {
			return e
		}
		return nil
	}
	return classify(err)
}

// WithHint returns e with a hint that tells the user what to change.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// WithPosition returns e pointing at a 1-based character offset.
func (e *Error) WithPosition(pos int) *Error {
	e.Position = pos
	return e
}

// From returns err as an *Error. An error without a SQLSTATE is given to
// the classifiers (see Classify); one none of them knows becomes
// InternalError (XX000) with its message.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if e := classify(err); e != nil {
		return e
	}
	return &Error{Code: InternalError, Message: err.Error()}
}

// Code returns the SQLSTATE of err, or "" if it carries none.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
