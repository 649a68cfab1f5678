package meta

import (
	"context"
	"log/slog"
	"sync"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/sqlerr"
	"streamdb/storage"
)

// Tables is the table changelog writer: the only code that publishes to
// a table's changelog or to the transaction stream. It holds each
// table's log (table_log.go: the commits its state does not hold yet,
// published in order by group commit) and publishes commits over
// several messages or subjects as transactions (table_txn.go). The
// frontend computes and checks a commit's changes under the table's log
// lock and hands them here; it never reaches JetStream itself for them.
type Tables struct {
	cfg TablesConfig

	mu   sync.Mutex
	logs map[uint32]*TableLog

	// txnsRemovedTo is the transaction stream sequence up to which
	// RemoveTxns has removed every transaction (its caller holds ddlMu).
	txnsRemovedTo uint64
}

// TablesRuntime is the dataflow runtime as the writer uses it
// (*exec.Runtime): a publish to several subjects is fenced off from
// barriers, so every view sees it in one epoch.
type TablesRuntime interface {
	PublishFenced(subjects []string, publish func() (map[string]uint64, error)) error
}

// TablesConfig is what the writer works on: one node's components and
// what it asks of the frontend.
type TablesConfig struct {
	Store   *storage.Store
	Broker  *broker.Broker
	Runtime TablesRuntime
	// Streams classifies publish errors (Streams.PublishFailure).
	Streams *Streams
	Log     *slog.Logger
	// Fence fails once this server no longer holds its group's lease;
	// the writer checks it before each publish and answers FencedError.
	Fence func() error
	// Acknowledged records that a message published to subject at seq
	// is acknowledged to a client, before the client hears of it: reads
	// that start after that wait for it.
	Acknowledged func(subject string, seq uint64)
	// WaitTableAt waits until table d's state holds its changelog up to
	// seq; what names the waiting write in its errors ("a COMMIT").
	WaitTableAt func(ctx context.Context, d *catalog.Descriptor, seq uint64, what string) error
	// MaxPayload is the largest message the NATS connection takes (0:
	// unknown).
	MaxPayload func() int64
}

// NewTables returns the writer over cfg, with no table's log yet.
func NewTables(cfg TablesConfig) *Tables { return &Tables{cfg: cfg} }

// ChangelogLimit is the largest changelog message the NATS connection
// takes, less room for the headers JetStream adds.
func (t *Tables) ChangelogLimit() int {
	limit := int(t.cfg.MaxPayload())
	if limit <= 0 {
		limit = 1 << 20
	}
	return limit - 4096
}

// checkFence answers FencedError once this server lost its lease.
func (t *Tables) checkFence() error {
	if err := t.cfg.Fence(); err != nil {
		return FencedError()
	}
	return nil
}

// publishFailure is the error a client gets for a publish that failed
// with err; what says what was being written.
func (t *Tables) publishFailure(err error, what string) error {
	return t.cfg.Streams.PublishFailure(err, what)
}

// waitTableCurrent waits until table d's state holds every change
// published to its changelog (read from JetStream, so it holds after a
// restart too).
func (t *Tables) waitTableCurrent(ctx context.Context, d *catalog.Descriptor, what string) error {
	last, err := t.cfg.Broker.LastSeqForSubject(ctx, d.JSStream, d.Subject)
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "read the changelog of table %s: %v", d.Name, err)
	}
	return t.cfg.WaitTableAt(ctx, d, last, what)
}

// StoredNotDurable is the error a client gets for a write that JetStream
// stored but that could not be fsynced: it is written and visible (08007,
// as for a write whose outcome the client must read back, never "nothing
// was written"), but an OS crash may lose it until a later fsync of its
// stream succeeds. what names the write ("the write to table \"t\"").
func StoredNotDurable(what string, err *NotDurableError) *sqlerr.Error {
	return sqlerr.New(sqlerr.TransactionResolutionUnknown, "%s was stored and is visible, but could not be made durable: %v", what, err.Err).
		WithHint("The write is there (read it back; do not repeat it) and survives a crash of streamdb, but an OS crash may lose it until a later write is fsynced. Check the server's free file descriptors and disk.")
}
