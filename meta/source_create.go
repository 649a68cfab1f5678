package meta

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/plan"
	"streamdb/sqlerr"
)

// SourcePlan is a CREATE STREAM or CREATE TABLE as the frontend bound
// it: the new object's descriptor (columns, types, defaults, generated
// columns, constraints and their indexes, subject, format and options,
// Kind still catalog.KindStream), and for a table the sequences of its
// serial and identity columns, which the columns already name.
type SourcePlan struct {
	Object *catalog.Descriptor
	// Table: the object is a table (not APPEND ONLY), whose changelog
	// streamdb owns. A stream with an envelope is not a Table, though it
	// is stored and run as one.
	Table bool
	// DefaultSubject: the statement named no subject, so a table takes
	// a free one under broker.TableSubjectPrefix (FreeTableSubject).
	DefaultSubject bool
	// Sequences are stored, owned by the table, once it has its id.
	Sequences []*catalog.Descriptor
}

// StreamBinder is what CREATE STREAM and CREATE TABLE ask of JetStream
// (Streams): bind or create the JetStream stream of a subject, give one
// back to its producers, delete one a failed CREATE made, the last
// sequence of one, and which stream holds a subject.
type StreamBinder interface {
	Bind(ctx context.Context, sqlName, subject, owner string) (name string, created bool, err error)
	Disown(ctx context.Context, name string) error
	Delete(ctx context.Context, name string) error
	Last(ctx context.Context, d *catalog.Descriptor) (uint64, error)
	StreamOf(ctx context.Context, subject string) (string, error)
}

// CreateSource applies CREATE STREAM or CREATE TABLE p: it refuses a
// subject another object's changelog holds, binds (or creates) the
// JetStream stream, stores the descriptor and, for a table or a stream
// with an envelope, starts its dataflow, then stores the sequences. A
// failure leaves neither a catalog entry nor a JetStream stream it made
// behind. The caller holds ddlMu, under which it bound p and checked
// that the name is free; it checkpoints the change (Checkpoint).
func (x *DDL) CreateSource(ctx context.Context, p SourcePlan) error {
	d := p.Object
	if p.Table && p.DefaultSubject {
		d.Subject = FreeTableSubject(x.cfg.Live.Objects(), d.Name)
	}
	if err := CheckSubjectFree(x.cfg.Live.Objects(), d.Name, d.Subject, p.Table); err != nil {
		return err
	}
	owner := ""
	if p.Table {
		var err error
		if owner, err = x.cfg.Dropped.Owner(); err != nil {
			return sqlerr.New(sqlerr.InternalError, "%v", err)
		}
	}
	jsName, created, err := x.cfg.Binder.Bind(ctx, d.Name, d.Subject, owner)
	if err != nil {
		var conflict *SubjectConflictError
		if errors.As(err, &conflict) {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "%v", err).
				WithHint("A stream reads one JetStream stream, and JetStream stores each subject in one stream only: choose a pattern whose subjects are all held by one JetStream stream (JetStream stream %s holds some), or give that stream the whole pattern as its subject (nats stream edit).", strings.Join(conflict.Streams, ", "))
		}
		return sqlerr.New(sqlerr.InternalError, "%v", err)
	}
	d.JSStream = jsName
	if created && x.cfg.StreamMadeAnew != nil {
		x.cfg.StreamMadeAnew(d.Subject)
	}
	// undo deletes the JetStream stream this statement created when a
	// later step fails before the catalog holds the new object.
	undo := func(err error) error {
		if created {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if derr := x.cfg.Binder.Delete(dctx, jsName); derr != nil {
				x.cfg.Log.Warn("CREATE failed; deleting the JetStream stream it created failed too", "jetstream", jsName, "err", derr)
			}
		}
		return err
	}
	if err := x.checkTxnSubjectStream(ctx, d); err != nil {
		return undo(err)
	}
	if p.Table {
		if err := x.prepareTable(ctx, d); err != nil {
			return undo(err)
		}
	} else if !created {
		// The stream's input belongs to its producers from now on, even
		// if streamdb once created this JetStream stream for a table.
		if err := x.cfg.Binder.Disown(ctx, jsName); err != nil {
			return sqlerr.New(sqlerr.InternalError, "bind JetStream stream %s: %v", jsName, err)
		}
	}
	// A stream with an envelope is made as a stream (its subject is its
	// producers') and stored and run as a table.
	envelope := d.Envelope() != ""
	if envelope {
		d.Kind = catalog.KindTable
	}
	if err := x.Create(d); err != nil {
		return undo(err)
	}
	x.cfg.Dropped.Forget(jsName)
	if !p.Table && !envelope {
		return nil
	}
	if err := x.startNewTable(ctx, d); err != nil {
		x.Drop(d)
		if created && p.Table {
			// A checkpoint may have caught the table in the catalog
			// meanwhile: collect the stream as a dropped table's.
			x.cfg.Dropped.Note(jsName, d.Subject)
			x.cfg.Dropped.CollectLocked()
			x.cfg.Dropped.Start()
		}
		return err
	}
	for _, q := range p.Sequences {
		q.Sequence.OwnedByTable = d.ID
		if err := x.Create(q); err != nil {
			return err
		}
	}
	return nil
}

// checkTxnSubjectStream refuses a transaction_subject of stream d that
// is not in d's JetStream stream.
func (x *DDL) checkTxnSubjectStream(ctx context.Context, d *catalog.Descriptor) error {
	subj := d.Options[exec.OptTransactionSubject]
	if subj == "" {
		return nil
	}
	js, err := x.cfg.Binder.StreamOf(ctx, subj)
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "looking up the JetStream stream of subject %q: %v", subj, err)
	}
	if js != d.JSStream {
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "transaction_subject %q is not in JetStream stream %s, which holds the stream's subject %q", subj, d.JSStream, d.Subject).
			WithHint("Debezium's transaction events and its change events must be in one JetStream stream, so that one order holds both: give that stream both subjects (Debezium Server: debezium.sink.nats-jetstream.subjects = '<prefix>.>').")
	}
	return nil
}

// prepareTable turns a stream descriptor into a table's: its changelog
// starts after whatever the subject already holds.
func (x *DDL) prepareTable(ctx context.Context, d *catalog.Descriptor) error {
	d.Kind = catalog.KindTable
	last, err := x.cfg.Binder.Last(ctx, d)
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "read JetStream stream %s: %v", d.JSStream, err)
	}
	d.StartSeq = last
	return nil
}

// startNewTable records where a new table's pipeline starts and starts it.
func (x *DDL) startNewTable(ctx context.Context, d *catalog.Descriptor) error {
	root, err := TableScan(d)
	if err != nil {
		return err
	}
	if err := x.InitPositions(ctx, d, root); err != nil {
		return err
	}
	return x.StartView(d, root)
}

// TableScan is the plan of table d's dataflow: a scan of its changelog,
// keyed by its primary key.
func TableScan(d *catalog.Descriptor) (*plan.Scan, error) {
	cols, err := d.Schema()
	if err != nil {
		return nil, err
	}
	return &plan.Scan{Object: d, Cols: cols, Keys: d.MemberKeys()}, nil
}

// CheckSubjectFree refuses to share a table's subject: a table's changelog
// belongs to it alone (its writes are serialised by this server, and its
// pipeline reads every message on the subject as a change). A table may
// not take a subject any stream or table of objs uses, and a stream may
// not take a table's. Streams may share one subject (their input is their
// producers'). A stream's subject pattern counts as every subject it
// matches.
func CheckSubjectFree(objs []*catalog.Descriptor, name, subject string, isTable bool) error {
	for _, o := range objs {
		if (o.Kind != catalog.KindTable && o.Kind != catalog.KindStream) || !SubjectsCollide(o.Subject, subject) {
			continue
		}
		if o.Kind == catalog.KindTable && o.Envelope() == "" {
			if o.Subject != subject {
				return sqlerr.New(sqlerr.DuplicateObject, "subject pattern %q matches subject %q, the changelog of table %s", subject, o.Subject, o.Name).
					WithHint("A table's subject belongs to that table alone. Choose a pattern that does not match it for %s.", name)
			}
			return sqlerr.New(sqlerr.DuplicateObject, "subject %q is the changelog of table %s", subject, o.Name).
				WithHint("A table's subject belongs to that table alone. Choose another subject with WITH (subject = '...') for %s.", name)
		}
		if isTable && o.Subject != subject {
			return sqlerr.New(sqlerr.DuplicateObject, "subject %q is matched by the subject pattern %q of stream %s", subject, o.Subject, o.Name).
				WithHint("A table's subject holds its changelog and cannot be read by a stream. Choose another subject with WITH (subject = '...') for %s.", name)
		}
		if isTable {
			return sqlerr.New(sqlerr.DuplicateObject, "subject %q is already used by stream %s", subject, o.Name).
				WithHint("A table's subject holds its changelog and cannot be shared. Choose another subject with WITH (subject = '...') for %s, or CREATE STREAM %s to read the stream's subject.", name, name)
		}
	}
	return nil
}

// FreeTableSubject is the default subject of a new table named name:
// streamdb.table.<name>, or with a suffix while a table of objs renamed
// from that name still keeps its changelog there.
func FreeTableSubject(objs []*catalog.Descriptor, name string) string {
	base := broker.TableSubjectPrefix + name
	taken := map[string]bool{}
	for _, t := range objs {
		if t.Kind == catalog.KindTable {
			taken[t.Subject] = true
		}
	}
	subject := base
	for i := 2; taken[subject]; i++ {
		subject = fmt.Sprintf("%s_%d", base, i)
	}
	return subject
}
