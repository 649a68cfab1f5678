package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A commit that does not fit in one message on one subject (a write over
// NATS's max_payload, or one that writes several tables or streams) goes
// through the transaction stream, so that it lands whole or not at all:
//
//  1. its data is published to TxnStream, on TxnDataSubject(id): table
//     changelog messages and stream rows, exactly as they would have been
//     published to their own subjects, as many as it takes;
//  2. each subject it writes gets one reference message (header TxnHeader,
//     body a TxnRef) naming the data's sequences in TxnStream; readers
//     take the referenced messages in its place, at its position;
//  3. a commit over several subjects is decided by one more message, on
//     TxnDecisionSubject(id), published only if no decision is there yet
//     (an expected last sequence of 0 on the subject): the first decision
//     wins, so a commit and the abort of recovery (or of a failed publish)
//     cannot both happen. A reader that reaches a reference waits for the
//     decision and takes the data only if the commit won. A reference
//     alone (one subject) is its own commit point.
//
// Every such commit first publishes an intent (TxnIntentSubject) naming
// the subjects it writes. A crash before the decision leaves references
// that wait for it; the server that starts next aborts every transaction
// over several subjects it finds undecided. A transaction's records are
// removed (RemoveTxn) once no subject it wrote still holds a message from
// before it ended, so no reader can reach its references.

// TxnStream is the JetStream stream that holds transactions' data and
// decisions.
const TxnStream = "streamdb_txn"

// TxnHeader marks a reference message; its value is the transaction id.
const TxnHeader = "Streamdb-Txn"

const txnPrefix = "streamdb.txn."

// TxnDataSubject, TxnIntentSubject and TxnDecisionSubject are the subjects
// of a transaction's data, of the record naming the subjects it writes
// (published first, for recovery and removal) and of its decision.
func TxnDataSubject(id string) string     { return txnPrefix + id + ".data" }
func TxnIntentSubject(id string) string   { return txnPrefix + id + ".intent" }
func TxnDecisionSubject(id string) string { return txnPrefix + id + ".decision" }

// TxnRef is the body of a reference message.
type TxnRef struct {
	Txn string `json:"txn"`
	// Decide says that the commit is decided by the transaction's
	// decision record rather than by this reference (readers go by the
	// intent, TxnCommitted; this is for people reading the stream).
	Decide bool `json:"decide,omitempty"`
	// Data lists the data's sequences in TxnStream as inclusive ranges,
	// in order.
	Data [][2]uint64 `json:"data"`
}

// TxnIntent is the body of a transaction's intent record.
type TxnIntent struct {
	Subjects []TxnSubject `json:"subjects"`
	// Decide makes a transaction over one subject decided by its decision
	// record, as one over several is: a streaming commit, whose data takes
	// as long as its client sends rows, so that an unfinished one is
	// never taken for ended (and removed) and its end is when it was
	// decided.
	Decide bool `json:"decide,omitempty"`
}

// TxnSubject is one subject a transaction writes.
type TxnSubject struct {
	Stream  string `json:"stream"`
	Subject string `json:"subject"`
}

const (
	txnCommit = "commit"
	txnAbort  = "abort"
)

// BadTxnRefError is a reference message that stands for nothing: not
// one streamdb wrote (a producer may publish anything on a stream's
// subject). Readers skip it as they skip any malformed message.
type BadTxnRefError struct{ msg string }

func (e *BadTxnRefError) Error() string { return e.msg }

// ParseTxnRef reports whether a message is a reference message and, if
// so, decodes it.
func ParseTxnRef(h nats.Header, data []byte) (TxnRef, bool, error) {
	id := h.Get(TxnHeader)
	if id == "" {
		return TxnRef{}, false, nil
	}
	var ref TxnRef
	if err := json.Unmarshal(data, &ref); err != nil || ref.Txn != id {
		return TxnRef{}, true, &BadTxnRefError{fmt.Sprintf("malformed transaction reference %q", id)}
	}
	return ref, true, nil
}

// NewTxnRefMsg builds the reference message for subject.
func NewTxnRefMsg(subject string, ref TxnRef) *nats.Msg {
	body, _ := json.Marshal(ref)
	m := nats.NewMsg(subject)
	m.Header.Set(TxnHeader, ref.Txn)
	m.Data = body
	return m
}

// AddTxnRange appends seq to ranges, extending the last range when seq
// follows it.
func AddTxnRange(ranges [][2]uint64, seq uint64) [][2]uint64 {
	if n := len(ranges); n > 0 && ranges[n-1][1]+1 == seq {
		ranges[n-1][1] = seq
		return ranges
	}
	return append(ranges, [2]uint64{seq, seq})
}

// EnsureTxnStream creates TxnStream if it does not exist and denies its
// subjects to producers.
func (b *Broker) EnsureTxnStream(ctx context.Context) error {
	if _, err := b.protectSubject(txnPrefix + ">"); err != nil {
		return err
	}
	_, err := b.JS.Stream(ctx, TxnStream)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("look up JetStream stream %s: %w", TxnStream, err)
	}
	_, err = b.JS.CreateStream(ctx, jetstream.StreamConfig{
		Name:     TxnStream,
		Subjects: []string{txnPrefix + ">"},
		Storage:  jetstream.FileStorage,
		Replicas: max(1, b.replicas),
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("create JetStream stream %s: %w", TxnStream, err)
	}
	return nil
}

// DecideTxn records the outcome of transaction id unless one is recorded
// already, and returns the outcome that stands.
func (b *Broker) DecideTxn(ctx context.Context, id string, commit bool) (committed bool, err error) {
	outcome := txnAbort
	if commit {
		outcome = txnCommit
	}
	_, err = b.JS.Publish(ctx, TxnDecisionSubject(id), []byte(outcome),
		jetstream.WithExpectStream(TxnStream), jetstream.WithExpectLastSequencePerSubject(0))
	var nd *NotDurableError
	if err == nil || errors.As(err, &nd) {
		return commit, err
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		committed, decided, gerr := b.TxnOutcome(ctx, id)
		if gerr != nil {
			return false, gerr
		}
		if decided {
			return committed, nil
		}
	}
	return false, err
}

// TxnOutcome returns the decision of transaction id, if there is one.
func (b *Broker) TxnOutcome(ctx context.Context, id string) (committed, decided bool, err error) {
	s, err := b.JS.Stream(ctx, TxnStream)
	if err != nil {
		return false, false, err
	}
	m, err := s.GetLastMsgForSubject(ctx, TxnDecisionSubject(id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return string(m.Data) == txnCommit, true, nil
}

// WaitTxnOutcome waits until transaction id is decided and returns whether
// it committed. Its writer decides it right after publishing its
// references, or the next server to start does.
func (b *Broker) WaitTxnOutcome(ctx context.Context, id string) (bool, error) {
	wait := time.Millisecond
	for {
		committed, decided, err := b.TxnOutcome(ctx, id)
		if err == nil && decided {
			return committed, nil
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// TxnCommitted decides whether a reference message found on subject
// stands for committed data. The reference itself is not trusted (anyone
// allowed to publish on the subject could forge one): the transaction's
// intent must name the subject, and a transaction whose intent names
// several subjects (or asks for a decision) must have a commit decision,
// whatever the reference says; its decision is waited for.
func (b *Broker) TxnCommitted(ctx context.Context, subject string, ref TxnRef) (bool, error) {
	s, err := b.JS.Stream(ctx, TxnStream)
	if err != nil {
		return false, fmt.Errorf("read transaction %s: %w", ref.Txn, err)
	}
	m, err := s.GetLastMsgForSubject(ctx, TxnIntentSubject(ref.Txn))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, &BadTxnRefError{fmt.Sprintf("a reference on subject %s to transaction %s, which does not exist", subject, ref.Txn)}
	}
	if err != nil {
		return false, fmt.Errorf("read the intent of transaction %s: %w", ref.Txn, err)
	}
	var in TxnIntent
	if err := json.Unmarshal(m.Data, &in); err != nil {
		return false, &BadTxnRefError{fmt.Sprintf("transaction %s: malformed intent", ref.Txn)}
	}
	named := false
	for _, ts := range in.Subjects {
		named = named || ts.Subject == subject
	}
	if !named {
		return false, &BadTxnRefError{fmt.Sprintf("a reference on subject %s to transaction %s, which did not write it", subject, ref.Txn)}
	}
	if len(in.Subjects) < 2 && !in.Decide {
		return true, nil
	}
	return b.WaitTxnOutcome(ctx, ref.Txn)
}

// ReadTxnData calls fn with each data message ref names, in order. A
// transaction with more than txnScanAtLeast data messages is read with one
// ordered consumer on its data subject rather than a request per message.
func (b *Broker) ReadTxnData(ctx context.Context, ref TxnRef, fn func(data []byte) error) error {
	s, err := b.JS.Stream(ctx, TxnStream)
	if err != nil {
		return fmt.Errorf("read transaction %s: %w", ref.Txn, err)
	}
	// next is the first sequence not yet read, in range ref.Data[i].
	i, next := 0, uint64(0)
	if len(ref.Data) > 0 {
		next = ref.Data[0][0]
	}
	advance := func(seq uint64) {
		next = seq + 1
		for i < len(ref.Data) && next > ref.Data[i][1] {
			if i++; i < len(ref.Data) {
				next = ref.Data[i][0]
			}
		}
	}
	if txnDataCount(ref) > txnScanAtLeast {
		err := b.scanFrom(ctx, TxnStream, TxnDataSubject(ref.Txn), next, func(m jetstream.Msg, seq uint64) (bool, error) {
			if i == len(ref.Data) {
				return false, nil
			}
			if seq < next {
				return true, nil // data of another subject of the transaction
			}
			if seq > next {
				return false, nil // a gap: read what is left one by one
			}
			if err := fn(m.Data()); err != nil {
				return false, err
			}
			advance(seq)
			return true, nil
		})
		if err != nil {
			return err
		}
	}
	for i < len(ref.Data) {
		seq := next
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			return fmt.Errorf("read transaction %s at sequence %d of %s: %w", ref.Txn, seq, TxnStream, err)
		}
		if m.Subject != TxnDataSubject(ref.Txn) {
			return &BadTxnRefError{fmt.Sprintf("transaction %s: sequence %d of %s holds another transaction's data", ref.Txn, seq, TxnStream)}
		}
		if err := fn(m.Data); err != nil {
			return err
		}
		advance(seq)
	}
	return nil
}

// txnScanAtLeast is the number of data messages above which ReadTxnData
// reads a transaction's data with a consumer: making one costs about as
// much as a few dozen single reads.
const txnScanAtLeast = 64

// txnDataCount is the number of data messages ref names.
func txnDataCount(ref TxnRef) uint64 {
	var n uint64
	for _, r := range ref.Data {
		n += r[1] - r[0] + 1
	}
	return n
}

// Txn is a transaction, as its intent and decision describe it.
type Txn struct {
	ID     string
	Intent TxnIntent
	// Decided and Committed give its decision.
	Decided, Committed bool
	// Began is when its intent was stored, DecidedAt when its decision was.
	Began, DecidedAt time.Time
}

// TxnIntents calls fn, in the order they were stored, for each
// transaction whose intent is at or after sequence from of TxnStream,
// with that sequence, until fn returns false.
func (b *Broker) TxnIntents(ctx context.Context, from uint64, fn func(t Txn, seq uint64) bool) error {
	s, err := b.JS.Stream(ctx, TxnStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return b.scanFrom(ctx, TxnStream, txnPrefix+"*.intent", from, func(m jetstream.Msg, seq uint64) (bool, error) {
		meta, err := m.Metadata()
		if err != nil {
			return false, err
		}
		id := strings.TrimSuffix(strings.TrimPrefix(m.Subject(), txnPrefix), ".intent")
		t := Txn{ID: id, Began: meta.Timestamp}
		if json.Unmarshal(m.Data(), &t.Intent) != nil {
			t.Intent = TxnIntent{}
		}
		d, err := s.GetLastMsgForSubject(ctx, TxnDecisionSubject(id))
		switch {
		case err == nil:
			t.Decided, t.Committed, t.DecidedAt = true, string(d.Data) == txnCommit, d.Time
		case !errors.Is(err, jetstream.ErrMsgNotFound):
			return false, err
		}
		return fn(t, seq), nil
	})
}

// RemoveTxn removes everything TxnStream holds of transaction id.
func (b *Broker) RemoveTxn(ctx context.Context, id string) error {
	s, err := b.JS.Stream(ctx, TxnStream)
	if err != nil {
		return err
	}
	return s.Purge(ctx, jetstream.WithPurgeSubject(txnPrefix+id+".>"))
}
