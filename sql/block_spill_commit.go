package sql

import (
	"context"
	"errors"
	"fmt"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// prepareSpilledCommit checks a block's changes to a table that spilled
// against the table as it is now, and returns the commit's part, whose
// messages are encoded from the spill as they are published (ok is false
// when the block changed nothing there). Each row identity is checked on
// its own, in the spill's order of identities (checkKeyedFirsts,
// replayUnkeyedSpill), so the check holds one identity's changes at a
// time and stays as exact as the replay of changes in memory: a row the
// block deletes must be there unchanged (or 40001), a key it inserts
// free (or 23505). Holding log.mu.
func (e *Engine) prepareSpilledCommit(ctx context.Context, w *tableWrite, log *meta.TableLog) (part meta.TxnPart, ok bool, err error) {
	if err := e.tableFailure(w.d); err != nil {
		return meta.TxnPart{}, false, err
	}
	if se := e.streams.WriteError(w.d.JSStream, fmt.Sprintf("could not write to table %q", w.d.Name)); se != nil {
		return meta.TxnPart{}, false, se
	}
	if err := e.ensureCurrent(ctx, w.d, log); err != nil {
		return meta.TxnPart{}, false, err
	}
	ts, err := e.openTableState(w.d, log)
	if err != nil {
		return meta.TxnPart{}, false, err
	}
	defer ts.Close()
	tail := exec.ChangelogOrder(w.stmts)
	changed := len(tail) > 0
	if ts.key != nil {
		var err error
		changed, err = checkKeyedFirsts(w, ts, tail)
		if err != nil {
			return meta.TxnPart{}, false, err
		}
	} else if changed, err = replayUnkeyedSpill(w, ts, tail); err != nil {
		return meta.TxnPart{}, false, err
	}
	if !changed {
		return meta.TxnPart{}, false, nil
	}
	if err := e.checkSpilledUniques(w, ts, tail); err != nil {
		return meta.TxnPart{}, false, err
	}
	members, limit := memberColumns(w.d, ts.cols), e.tables.ChangelogLimit()
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
	return meta.TxnPart{D: w.d, Log: log, Source: source}, true, nil
}

// checkKeyedFirsts checks the block's changes to a keyed table that
// spilled against the table as it is now. Only each key's first change
// meets a row of others: the rest follow the block's own changes of that
// key. So a first insertion needs its key free (else 23505), a first
// deletion the row it deleted there unchanged (else 40001), as
// replayKeyed finds. changed is false when the block changed nothing.
func checkKeyedFirsts(w *tableWrite, ts *tableState, tail []exec.Change) (changed bool, err error) {
	taken, err := ts.KeyTakenInRange()
	if err != nil {
		return false, err
	}
	check := func(identity []byte, ch exec.Change) error {
		changed = true
		if ch.Sign > 0 {
			dup, err := taken(identity)
			if err == nil && dup {
				err = duplicateKey(w.d, ts.cols, ts.key, ch.Row)
			}
			return err
		}
		return replayKeyed(w.d, ts, []exec.Change{ch})
	}
	seen := map[string]bool{} // the keys the spill changes that the tail changes too
	tailFirst := map[string]exec.Change{}
	for _, ch := range tail {
		k := string(rowKey(ts.key, ch.Row))
		if _, ok := tailFirst[k]; !ok {
			tailFirst[k] = ch
		}
	}
	err = w.spill.eachFirstOwn(func(identity []byte, first exec.Change) error {
		if _, ok := tailFirst[string(identity)]; ok {
			seen[string(identity)] = true
		}
		return check(identity, first)
	})
	if err != nil {
		return false, err
	}
	for k, ch := range tailFirst {
		if !seen[k] {
			if err := check([]byte(k), ch); err != nil {
				return false, err
			}
		}
	}
	return changed, nil
}

// replayUnkeyedSpill replays the block's changes to a table without a
// primary key that spilled against the table as it is now, one row
// identity at a time (replayUnkeyed): a deletion must find a row equal to
// the one it deleted (else 40001).
func replayUnkeyedSpill(w *tableWrite, ts *tableState, tail []exec.Change) (changed bool, err error) {
	tailOf := map[string][]exec.Change{}
	for _, ch := range tail {
		k := string(rowKey(nil, ch.Row))
		tailOf[k] = append(tailOf[k], ch)
	}
	changed = len(tail) > 0
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
		return replayUnkeyed(w.d, ts, chain)
	})
	if err != nil {
		return false, err
	}
	for _, chain := range tailOf {
		if err := replayUnkeyed(w.d, ts, chain); err != nil {
			return false, err
		}
	}
	return changed, nil
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
