package meta

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/types"
)

// runSource runs testdata/ddl's commands of CREATE STREAM and CREATE
// TABLE (CreateSource):
//
//	jetstream name=J subject=S last=N
//	                      a JetStream stream J that holds subject S up to N
//	source name=N [table] [subject=S] [envelope] [serial=C] [txn-subject=X]
//	       [fail-bind] [conflict] [fail-start]
//	                      CreateSource of N (columns k, x; serial column C
//	                      with its sequence); the statement names subject S
//	                      (else the default); fail-bind: JetStream fails,
//	                      conflict: S's subjects are in two JetStream streams,
//	                      fail-start: the table's dataflow does not start
func (env *ddlEnv) runSource(t *testing.T, d *datadriven.TestData, name string) string {
	b := env.binder
	switch d.Cmd {
	case "jetstream":
		var subject string
		var last uint64
		d.ScanArgs(t, "subject", &subject)
		d.ScanArgs(t, "last", &last)
		b.bySubject[subject], b.last[name] = name, last
		return "ok\n"
	}
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "x", Type: types.Int8}}
	p := SourcePlan{Table: d.HasArg("table")}
	var serial string
	if d.HasArg("serial") {
		d.ScanArgs(t, "serial", &serial)
		cols = append(cols, types.Column{Name: serial, Type: types.Int8})
	}
	obj := &catalog.Descriptor{Name: name, Kind: catalog.KindStream, Columns: catalog.ColumnsFrom(cols), Format: "json",
		Options: map[string]string{}, PrimaryKey: []string{"k"}}
	if d.HasArg("subject") {
		d.ScanArgs(t, "subject", &obj.Subject)
	} else {
		obj.Subject, p.DefaultSubject = name, true
		if p.Table {
			obj.Subject = broker.TableSubjectPrefix + name
		}
	}
	if d.HasArg("envelope") {
		obj.Options[catalog.OptEnvelope] = catalog.EnvelopeDebezium
	}
	if d.HasArg("txn-subject") {
		var txn string
		d.ScanArgs(t, "txn-subject", &txn)
		obj.Options[exec.OptTransactionSubject] = txn
	}
	if serial != "" {
		seq := name + "_" + serial + "_seq"
		obj.Columns[2].Default = "nextval('" + seq + "'::regclass)"
		p.Sequences = append(p.Sequences, &catalog.Descriptor{Name: seq, Kind: catalog.KindSequence,
			Sequence: &catalog.Sequence{Type: "bigint", Increment: 1, Min: 1, Max: 1 << 62, Start: 1, Cache: 1, Key: seq, OwnedByColumn: serial}})
	}
	p.Object = obj
	b.fail, b.conflict = d.HasArg("fail-bind"), d.HasArg("conflict")
	env.rt.failStart = d.HasArg("fail-start")
	defer func() { env.rt.failStart, b.fail, b.conflict = false, false, false }()
	b.done = nil
	notes := env.collector.collects
	var sb strings.Builder
	if err := env.ddl.CreateSource(context.Background(), p); err != nil {
		sb.WriteString(errLine(err))
	} else {
		_, running := env.rt.running[obj.ID]
		fmt.Fprintf(&sb, "%s: %s id=%d subject=%s jetstream=%s start=%d running=%t\n",
			obj.Name, obj.Kind, obj.ID, obj.Subject, obj.JSStream, obj.StartSeq, running)
		for _, q := range p.Sequences {
			fmt.Fprintf(&sb, "%s: sequence id=%d owned by %d.%s\n", q.Name, q.ID, q.Sequence.OwnedByTable, q.Sequence.OwnedByColumn)
		}
	}
	if len(b.done) > 0 {
		fmt.Fprintf(&sb, "jetstream: %s\n", strings.Join(b.done, "; "))
	}
	if len(b.madeAnew) > 0 {
		fmt.Fprintf(&sb, "acknowledged writes forgotten on: %s\n", strings.Join(b.madeAnew, ", "))
		b.madeAnew = nil
	}
	if env.collector.collects > notes {
		fmt.Fprintf(&sb, "collected; %s pending: %t\n", obj.Subject, env.dropped.PendingCollides(obj.Subject))
	}
	sb.WriteString(env.listCatalog(t))
	return sb.String()
}

// fakeBinder is JetStream as CreateSource sees it: the streams by the
// subject they hold, and their last sequences.
type fakeBinder struct {
	bySubject map[string]string
	last      map[string]uint64
	// done lists what the last command did to JetStream; madeAnew the
	// subjects StreamMadeAnew was told of.
	done           []string
	madeAnew       []string
	fail, conflict bool
}

func (b *fakeBinder) Bind(_ context.Context, sqlName, subject, owner string) (string, bool, error) {
	if b.fail {
		return "", false, errors.New("nats: timeout")
	}
	if b.conflict {
		return "", false, &broker.SubjectConflictError{Pattern: subject, Streams: []string{"A", "B"},
			Msg: fmt.Sprintf("subjects of %q are held by JetStream streams A and B", subject)}
	}
	if name, ok := b.bySubject[subject]; ok {
		return name, false, nil
	}
	name := "JS_" + strings.ToUpper(sqlName)
	b.bySubject[subject] = name
	b.done = append(b.done, fmt.Sprintf("created %s (owner set: %t)", name, owner != ""))
	return name, true, nil
}

func (b *fakeBinder) Disown(_ context.Context, name string) error {
	b.done = append(b.done, "disowned "+name)
	return nil
}

func (b *fakeBinder) Delete(_ context.Context, name string) error {
	for subj, n := range b.bySubject {
		if n == name {
			delete(b.bySubject, subj)
		}
	}
	b.done = append(b.done, "deleted "+name)
	return nil
}

func (b *fakeBinder) Last(_ context.Context, d *catalog.Descriptor) (uint64, error) {
	return b.last[d.JSStream], nil
}

func (b *fakeBinder) StreamOf(_ context.Context, subject string) (string, error) {
	return b.bySubject[subject], nil
}

// fakeCollector is the dropped streams' collector without JetStream: it
// keeps the pending set and counts collections instead of running them.
type fakeCollector struct {
	*DroppedStreams
	collects, starts int
}

func (c *fakeCollector) CollectLocked() { c.collects++ }
func (c *fakeCollector) Start()         { c.starts++ }

func TestFreeTableSubject(t *testing.T) {
	objs := []*catalog.Descriptor{
		{Name: "old", Kind: catalog.KindTable, Subject: "streamdb.table.t"},
		{Name: "old2", Kind: catalog.KindTable, Subject: "streamdb.table.t_2"},
		{Name: "s", Kind: catalog.KindStream, Subject: "streamdb.table.u"},
	}
	for name, want := range map[string]string{"t": "streamdb.table.t_3", "u": "streamdb.table.u", "v": "streamdb.table.v"} {
		if got := FreeTableSubject(objs, name); got != want {
			t.Errorf("FreeTableSubject(%s) = %s, want %s", name, got, want)
		}
	}
}
