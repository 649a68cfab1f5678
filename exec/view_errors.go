package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/sqlerr"
	"streamdb/storage"
)

// Rows that fail inside a view. Evaluating a row can fail (division by
// zero, an overflow, a cast of bad text): by default the row is skipped
// where it fails and recorded, as a malformed message is, so one bad row
// never stops a view. A view created WITH (on_error = 'fail') stops
// instead; its reads then fail with the cause (see ViewFailure). A
// message the view's reader skips (not JSON, a value that does not fit its
// column, text PostgreSQL refuses) is recorded and fails the view alike.
//
// Skipping is deterministic: whether a row fails depends only on the row
// (and, for a join's residual condition, on the pair of rows), so a replay
// after recovery skips exactly the rows skipped before, and a retraction
// of a skipped row is skipped too. Operators evaluate everything a row
// needs before they change state, so a skipped row leaves no trace. The
// count and the last errors are state of the view, committed with each
// epoch under viewErrorsIndex, so they survive restarts exactly as
// watermark late-row counts do.

// OnErrorOption is the view option (Descriptor.Options) that says what a
// row failing inside the view does: OnErrorSkip (the default) or
// OnErrorFail.
const (
	OnErrorOption = "on_error"
	OnErrorSkip   = "skip"
	OnErrorFail   = "fail"
)

// viewErrorsIndex is the state table of a view's error record; operators
// are numbered from firstOperatorIndex upwards and never reach it.
const viewErrorsIndex uint16 = 0xFFFF

// keepViewErrors is how many of its latest errors a view keeps.
const keepViewErrors = 20

// ViewError is one row that failed inside a view.
type ViewError struct {
	View     string    `json:"-"`
	Stream   string    `json:"stream,omitempty"` // the source the row came from; "" when it came out of an operator at a barrier
	Operator string    `json:"operator"`
	Seq      uint64    `json:"seq,omitempty"` // JetStream sequence of its message; 0 when not known
	Code     string    `json:"code"`          // SQLSTATE
	Message  string    `json:"message"`
	At       time.Time `json:"at"`
	// Count is how many rows have failed in the view so far (on every
	// ViewError that ViewErrors returns for it).
	Count uint64 `json:"-"`
}

// viewErrors is a pipeline's record of failed rows. The pipeline
// goroutine writes it; the system table reads it from others (under mu).
type viewErrors struct {
	id    uint32
	view  string
	store *storage.Store
	log   *slog.Logger

	// Set by the pipeline goroutine: where the rows being pushed come
	// from; mode is read from the catalog at the first error.
	stream   string
	seq      uint64
	modeRead bool
	fail     bool
	dirty    bool

	mu    sync.Mutex
	count uint64
	last  []ViewError
}

type viewErrorState struct {
	Count uint64      `json:"count"`
	Last  []ViewError `json:"last,omitempty"`
}

func viewErrorsKey(id uint32) []byte { return storage.StatePrefix(id, viewErrorsIndex) }

// newViewErrors returns the error record of view id, restored from the
// store (a damaged record is logged and started afresh: it is diagnostic
// state, nothing else reads it).
func newViewErrors(store *storage.Store, id uint32, view string, log *slog.Logger) *viewErrors {
	ve := &viewErrors{id: id, view: view, store: store, log: log}
	if store == nil {
		return ve
	}
	v, ok, err := store.Get(viewErrorsKey(id))
	if err == nil && ok {
		var st viewErrorState
		if err = json.Unmarshal(v, &st); err == nil {
			ve.count, ve.last = st.Count, st.Last
		}
	}
	if err != nil && log != nil {
		log.Warn("ignoring the view's damaged error record", "view", view, "err", err)
	}
	return ve
}

// from sets where the rows pushed next come from: a source's stream and
// the JetStream sequence of their message when it is known (0 if not).
// An empty stream means operator output at a barrier.
func (ve *viewErrors) from(stream string, seq uint64) {
	if ve != nil {
		ve.stream, ve.seq = stream, seq
	}
}

// skippable reports whether err is an error of evaluating a row (a data
// exception and its kin, which the row alone decides) rather than one of
// the system (storage, decoding state), which must stop the view.
func skippable(err error) bool {
	switch c := sqlerr.Code(err); {
	case c == "":
		return false
	default:
		switch c[:2] {
		case "22", "54", "0A", "42", "23":
			return true
		}
	}
	return false
}

// skip records a row that failed with err in operator op. It returns nil
// when the operator should skip the row and go on, or err when the view
// must stop: err is not a row's error, the view is on_error = 'fail', or
// there is no record (ve nil: an operator outside a pipeline).
func (ve *viewErrors) skip(op string, err error) error {
	if ve == nil || !skippable(err) {
		return err
	}
	if ve.record(op, sqlerr.From(err), true) {
		return err
	}
	return nil
}

// message records a message of stream (at JetStream sequence seq) that
// the view's reader skipped because err: it is not a JSON object, or a
// value does not fit its column (invalid text included). Its SQLSTATE is
// the decoder's, or 22P02 (PostgreSQL's for invalid JSON); the message
// names the field. It returns nil when the view goes on, or the error
// when the view is on_error = 'fail'. (The reader logs the message.)
func (ve *viewErrors) message(stream string, seq uint64, err error) error {
	if ve == nil {
		return nil
	}
	code := sqlerr.Code(err)
	if code == "" {
		code = sqlerr.InvalidTextRepresentation
	}
	ve.from(stream, seq)
	defer ve.from("", 0)
	e := &sqlerr.Error{Code: code, Message: err.Error()}
	if ve.record("source", e, false) {
		return e
	}
	return nil
}

// record adds e, the error of a row in operator op, to the record (and
// the log when log is set). It reports whether the view must stop
// (on_error = 'fail').
func (ve *viewErrors) record(op string, e *sqlerr.Error, log bool) bool {
	fail := ve.failMode()
	rec := ViewError{Stream: ve.stream, Operator: op, Seq: ve.seq, Code: e.Code, Message: e.Message, At: time.Now().UTC()}
	ve.mu.Lock()
	ve.count++
	n := ve.count
	ve.last = append(ve.last, rec)
	if len(ve.last) > keepViewErrors {
		ve.last = append(ve.last[:0:0], ve.last[len(ve.last)-keepViewErrors:]...)
	}
	ve.mu.Unlock()
	ve.dirty = true
	if fail {
		return true
	}
	if log && ve.log != nil && (n <= 10 || n%1000 == 0) {
		ve.log.Warn("skipping a row that failed in the view", "view", ve.view, "stream", ve.stream, "seq", ve.seq,
			"operator", op, "sqlstate", e.Code, "err", e.Message, "failed_rows", n)
	}
	return false
}

// failMode reads the view's on_error option from the catalog, once.
func (ve *viewErrors) failMode() bool {
	if ve.modeRead || ve.store == nil {
		return ve.fail
	}
	ve.modeRead = true
	ds, err := storage.Descriptors(ve.store.DB())
	if err != nil {
		if ve.log != nil {
			ve.log.Warn("reading the view's on_error option; skipping failed rows", "view", ve.view, "err", err)
		}
		return false
	}
	for _, d := range ds {
		if d.ID == ve.id {
			ve.fail = strings.EqualFold(d.Options[OnErrorOption], OnErrorFail)
		}
	}
	return ve.fail
}

// flush writes the record into an epoch's batch when it changed.
func (ve *viewErrors) flush(b *pebble.Batch) error {
	if ve == nil || !ve.dirty {
		return nil
	}
	ve.mu.Lock()
	v, err := json.Marshal(viewErrorState{Count: ve.count, Last: ve.last})
	ve.mu.Unlock()
	if err != nil {
		return err
	}
	if err := b.Set(viewErrorsKey(ve.id), v, nil); err != nil {
		return err
	}
	ve.dirty = false
	return nil
}

func (ve *viewErrors) snapshot() []ViewError {
	ve.mu.Lock()
	defer ve.mu.Unlock()
	out := make([]ViewError, 0, len(ve.last))
	for _, e := range ve.last {
		e.View, e.Count = ve.view, ve.count
		out = append(out, e)
	}
	return out
}

// latest returns the newest recorded error, if any.
func (ve *viewErrors) latest() (ViewError, bool) {
	ve.mu.Lock()
	defer ve.mu.Unlock()
	if len(ve.last) == 0 {
		return ViewError{}, false
	}
	return ve.last[len(ve.last)-1], true
}

// attachViewErrors gives every operator of a pipeline that evaluates rows
// the pipeline's error record, walking the dataflow from its heads.
// An operator the walk does not reach keeps a nil record and stops the
// view on an error, as before records existed.
func attachViewErrors(heads []Operator, ve *viewErrors) {
	seen := map[Operator]bool{}
	var walk func(op Operator)
	walk = func(op Operator) {
		if op == nil || seen[op] {
			return
		}
		seen[op] = true
		switch o := op.(type) {
		case *filterOp:
			o.errs = ve
			walk(o.next)
		case *projectOp:
			o.errs = ve
			walk(o.next)
		case *aggOp:
			o.errs = ve
			walk(o.next)
		case *joinPort:
			o.op.errs = ve
			walk(o.op.next)
		case *unionOp:
			walk(o.next)
		case *countingOp:
			walk(o.next)
		case *windowOp:
			o.errs = ve
			walk(o.next)
		case *watermarkOp:
			o.errs = ve
			walk(o.next)
		case *topNOp:
			o.errs = ve
			walk(o.next)
		case *teeOp:
			for _, out := range o.outputs {
				walk(out)
			}
		}
	}
	for _, h := range heads {
		walk(h)
	}
}

// ViewErrors lists the latest failed rows of every view, by view and
// time.
func (rt *Runtime) ViewErrors() []ViewError {
	rt.mu.Lock()
	var recs []*viewErrors
	for _, p := range rt.pipelines {
		if p.errs != nil {
			recs = append(recs, p.errs)
		}
	}
	for _, p := range rt.failed {
		if p.errs != nil {
			recs = append(recs, p.errs)
		}
	}
	rt.mu.Unlock()
	var out []ViewError
	for _, ve := range recs {
		out = append(out, ve.snapshot()...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].View != out[j].View {
			return out[i].View < out[j].View
		}
		return out[i].At.Before(out[j].At)
	})
	return out
}

// ViewFailure returns nil for a view that is running (or unknown), and
// for one whose dataflow stopped, the error a read of it gets: the
// cause's SQLSTATE, a message naming the view and the cause, and how to
// repair it. A stopped view's state is as of its last epoch before the
// failure, so reading it would show stale rows as current.
func (rt *Runtime) ViewFailure(id uint32) error {
	p := rt.stopped(id)
	if p == nil || p.err == nil {
		return nil
	}
	return rt.failureError(p)
}

// PipelineError is the error the dataflow of a view or table stopped
// with, or nil while it runs (or for an unknown id).
func (rt *Runtime) PipelineError(id uint32) error {
	if p := rt.stopped(id); p != nil {
		return p.err
	}
	return nil
}

// stopped is the pipeline of id if it has stopped, else nil.
func (rt *Runtime) stopped(id uint32) *pipeline {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if p := rt.failed[id]; p != nil {
		return p
	}
	if q := rt.pipelines[id]; q != nil {
		select {
		case <-q.done:
			return q
		default:
		}
	}
	return nil
}

// failureError is the SQL error of pipeline p, which stopped with p.err.
func (rt *Runtime) failureError(p *pipeline) *sqlerr.Error {
	cause := sqlerr.From(p.err)
	e := &sqlerr.Error{Code: cause.Code, Message: fmt.Sprintf("materialized view %q stopped: %s", p.name, p.err.Error())}
	where := ""
	if p.errs != nil {
		if last, ok := p.errs.latest(); ok && last.Message == cause.Message {
			switch {
			case last.Stream != "" && last.Seq != 0:
				where = fmt.Sprintf("a row of stream %s (JetStream sequence %d) failed in its %s", last.Stream, last.Seq, last.Operator)
			case last.Stream != "":
				where = fmt.Sprintf("a row of stream %s failed in its %s", last.Stream, last.Operator)
			default:
				where = fmt.Sprintf("a row failed in its %s", last.Operator)
			}
			e.Detail = "The view was created WITH (on_error = 'fail'): " + where + ", and it stopped there; its rows are not served, being as of before that row."
		}
	}
	pos := "ALTER STREAM <stream> SET POSITION = <sequence after the failing message>"
	if p.errs != nil {
		if last, ok := p.errs.latest(); ok && last.Stream != "" && last.Seq != 0 {
			pos = fmt.Sprintf("ALTER STREAM %s SET POSITION = %d", last.Stream, last.Seq+1)
		}
	}
	e.Hint = "Drop and re-create the view once the cause is fixed (by default a view skips rows that fail and lists them in streamdb_view_errors), or move its input past the failing message with " + pos + ", which restarts every view reading that stream from there."
	if errors.Is(p.err, ErrInputLost) || cause.Code == sqlerr.OutOfMemory {
		e.Hint = cause.Hint // the input is gone, or the view too large: no row to skip
	}
	return e
}
