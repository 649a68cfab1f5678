package sql

import (
	"context"
	"errors"
	"fmt"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/types"
)

// prepareSpilledCommit checks a block's changes to a table that spilled
// against the table as it is now, and returns the commit's part, whose
// messages are encoded from the spill as they are published (ok is false
// when the block changed nothing there). Each row identity's changes are
// replayed on their own (replayKeyed, replayUnkeyed), in the spill's
// order of identities, so the check holds one identity's changes at a
// time and stays as exact as the replay of changes in memory: a row the
// block deletes must be there unchanged (or 40001), a key it inserts
// free (or 23505). Holding log.mu.
func (e *Engine) prepareSpilledCommit(ctx context.Context, w *tableWrite, log *tableLog) (part txnPart, ok bool, err error) {
	if err := e.tableFailure(w.d); err != nil {
		return txnPart{}, false, err
	}
	if se := e.broker.StreamWriteError(w.d.JSStream, fmt.Sprintf("could not write to table %q", w.d.Name)); se != nil {
		return txnPart{}, false, se
	}
	if err := e.ensureCurrent(ctx, w.d, log); err != nil {
		return txnPart{}, false, err
	}
	ts, err := e.openTableState(w.d, log)
	if err != nil {
		return txnPart{}, false, err
	}
	defer ts.close()
	replay := replayUnkeyed
	if ts.key != nil {
		replay = replayKeyed
	}
	tail := exec.ChangelogOrder(w.stmts)
	tailOf := map[string][]exec.Change{}
	for _, ch := range tail {
		k := string(rowKey(ts.key, ch.Row))
		tailOf[k] = append(tailOf[k], ch)
	}
	changed := len(tail) > 0
	var chain []exec.Change
	err = w.spill.eachIdentity(func(identity []byte, spilled []spillChange) error {
		chain = chain[:0]
		for _, ch := range spilled {
			if ch.seq >= w.spill.own {
				chain = append(chain, ch.Change)
			}
		}
		if t, ok := tailOf[string(identity)]; ok {
			chain = append(chain, t...)
			delete(tailOf, string(identity))
		}
		if len(chain) == 0 {
			return nil
		}
		changed = true
		return replay(w.d, ts, chain)
	})
	if err != nil {
		return txnPart{}, false, err
	}
	for _, chain := range tailOf {
		if err := replay(w.d, ts, chain); err != nil {
			return txnPart{}, false, err
		}
	}
	if !changed {
		return txnPart{}, false, nil
	}
	members, limit := memberColumns(w.d, ts.cols), e.changelogLimit()
	source := func(emit func([]byte) error) error {
		encode := func(batch []exec.Change) error {
			msgs, err := encodeTableChanges(w.d, members, batch, limit)
			for _, m := range msgs {
				if err == nil {
					err = emit(m)
				}
			}
			return err
		}
		if err := w.spill.eachOwn(changeBatchRows, encode); err != nil {
			return err
		}
		for i := 0; i < len(tail); i += changeBatchRows {
			if err := encode(tail[i:min(i+changeBatchRows, len(tail))]); err != nil {
				return err
			}
		}
		return nil
	}
	return txnPart{d: w.d, log: log, source: source}, true, nil
}

// encodeTableChanges encodes changes to table d as changelog messages of
// at most limit bytes.
func encodeTableChanges(d *catalog.Descriptor, members []types.Column, changes []exec.Change, limit int) ([][]byte, error) {
	msgs, err := exec.EncodeChangelogChunks(members, changes, limit)
	var tooLarge *exec.ErrChangelogTooLarge
	if errors.As(err, &tooLarge) {
		return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "a row of table %q is %d bytes, over the limit of %d bytes for one row", d.Name, tooLarge.Size, tooLarge.Limit).
			WithHint("The limit is the NATS server's max_payload.")
	}
	return msgs, err
}
