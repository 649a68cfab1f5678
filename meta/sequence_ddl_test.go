package meta

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdb/catalog"
)

// runSequence runs testdata/ddl's commands of sequences:
//
//	sequence name=Q [start=N]      CreateSequence of Q (1.. 1000, by 1)
//	alter-sequence name=Q [increment=N] [max=N] [restart] [restart-at=N]
//	                               AlterSequence of Q: a new definition
//	                               when increment or max is given
func (env *ddlEnv) runSequence(t *testing.T, d *datadriven.TestData, name string) string {
	ctx := context.Background()
	var sb strings.Builder
	switch d.Cmd {
	case "sequence":
		q := &catalog.Sequence{Type: "bigint", Increment: 1, Min: 1, Max: 1000, Start: 1, Cache: 1, Key: name}
		if d.HasArg("start") {
			d.ScanArgs(t, "start", &q.Start)
		}
		s := &catalog.Descriptor{Name: name, Kind: catalog.KindSequence, Sequence: q}
		if err := env.ddl.CreateSequence(s); err != nil {
			return errLine(err)
		}
	case "alter-sequence":
		cur := env.lookup(t, name)
		a := SequenceAlter{Object: cur, Restart: d.HasArg("restart") || d.HasArg("restart-at")}
		if d.HasArg("restart-at") {
			var v int64
			d.ScanArgs(t, "restart-at", &v)
			a.RestartAt = &v
		}
		if d.HasArg("increment") || d.HasArg("max") {
			q := *cur.Sequence
			if d.HasArg("increment") {
				d.ScanArgs(t, "increment", &q.Increment)
			}
			if d.HasArg("max") {
				d.ScanArgs(t, "max", &q.Max)
			}
			a.Definition = &q
		}
		env.seqValues.done = nil
		if err := env.ddl.AlterSequence(ctx, a); err != nil {
			sb.WriteString(errLine(err))
		}
		if len(env.seqValues.done) > 0 {
			fmt.Fprintf(&sb, "values: %s\n", strings.Join(env.seqValues.done, "; "))
		}
	}
	s := storedNames(t, env.store)[name]
	if s == nil || s.Sequence == nil {
		return sb.String() + "not stored\n"
	}
	q := s.Sequence
	fmt.Fprintf(&sb, "%s: sequence id=%d increment=%d min=%d max=%d start=%d\n", name, s.ID, q.Increment, q.Min, q.Max, q.Start)
	return sb.String()
}

// fakeSeqValues records what AlterSequence asks of the values.
type fakeSeqValues struct{ done []string }

func (f *fakeSeqValues) Altered(_ context.Context, d *catalog.Descriptor) error {
	f.done = append(f.done, fmt.Sprintf("altered (increment %d)", d.Sequence.Increment))
	return nil
}

func (f *fakeSeqValues) Set(_ context.Context, d *catalog.Descriptor, v int64, called bool) error {
	f.done = append(f.done, fmt.Sprintf("set to %d, called %t", v, called))
	return nil
}
