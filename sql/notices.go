package sql

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/types"
)

// cascadeOrder returns deps (the objects that read name, directly or
// through others) in the order PostgreSQL's DROP ... CASCADE reports
// them: depth first from name, each object's readers in the order they
// were created, each object once.
func cascadeOrder(name string, deps []*catalog.Descriptor) []*catalog.Descriptor {
	readers := map[string][]*catalog.Descriptor{}
	for _, d := range deps {
		for _, on := range d.DependsOn {
			readers[on] = append(readers[on], d)
		}
	}
	for _, r := range readers {
		slices.SortFunc(r, func(a, b *catalog.Descriptor) int { return int(int64(a.ID) - int64(b.ID)) })
	}
	var out []*catalog.Descriptor
	seen := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		for _, d := range readers[n] {
			if !seen[d.Name] {
				seen[d.Name] = true
				out = append(out, d)
				visit(d.Name)
			}
		}
	}
	visit(name)
	return out
}

// cascadeLines are the "drop cascades to ..." lines of the objects a
// DROP ... CASCADE of name removes besides it.
func cascadeLines(name string, deps []*catalog.Descriptor, sinks []*meta.SinkDescriptor) []string {
	var lines []string
	for _, d := range cascadeOrder(name, deps) {
		lines = append(lines, "drop cascades to "+relKindWord(d)+" "+d.Name)
	}
	for _, s := range sinks {
		lines = append(lines, "drop cascades to sink "+s.Name)
	}
	return lines
}

// cascadeNotice sends PostgreSQL's NOTICE for the objects a DROP ...
// CASCADE removed besides those it named: the one object in the message,
// or a count with each object on a line of the detail.
func cascadeNotice(ctx context.Context, lines []string) {
	switch len(lines) {
	case 0:
	case 1:
		pgwire.Notice(ctx, lines[0], "")
	default:
		pgwire.Notice(ctx, fmt.Sprintf("drop cascades to %d other objects", len(lines)), strings.Join(lines, "\n"))
	}
}

// streamsOnSubject names, sorted, the streams that read subject.
func (e *Engine) streamsOnSubject(subject string) []string {
	var out []string
	for _, o := range e.objects(catalog.KindStream) {
		switch {
		case o.Subject == subject:
			out = append(out, o.Name)
		case meta.SubjectsCollide(o.Subject, subject):
			// Patterns: some of the messages are read by both.
			out = append(out, fmt.Sprintf("%s (subject %q)", o.Name, o.Subject))
		}
	}
	slices.Sort(out)
	return out
}

// sharedSubjectNotice tells the creator of stream name that the streams
// in sharing read its subject too. A second stream on a subject is
// allowed (it may read the messages with other columns), but one made on
// a mistyped or copied subject would otherwise mix two inputs unseen.
func sharedSubjectNotice(ctx context.Context, name, subject string, sharing []string) {
	if len(sharing) == 0 {
		return
	}
	what, both := "subject %q is also read by stream %s", "Both read every message published to it"
	if meta.IsSubjectPattern(subject) || strings.Contains(strings.Join(sharing, ""), "(subject ") {
		what, both = "messages on subject %q are also read by stream %s", "Both read every message on a subject both match"
	}
	either := ", and an INSERT into either is read by both"
	if len(sharing) > 1 {
		what = strings.Replace(what, "by stream", "by streams", 1)
		both = strings.Replace(strings.Replace(both, "Both", "All", 1), "both match", "all match", 1)
		either = ", and an INSERT into any of them is read by all"
	}
	pgwire.Notice(ctx, fmt.Sprintf(what, clipSubject(subject), strings.Join(sharing, ", ")),
		fmt.Sprintf("%s%s. To read other messages, DROP STREAM %s and create it again WITH (subject = '...').", both, either, name))
}

// backfillErrorsNotice tells the creator of view d how many rows failed
// during its backfill and were left out: without it a view whose every
// row fails (1/0 on each) is created in silence and reads empty.
func (e *Engine) backfillErrorsNotice(ctx context.Context, d *catalog.Descriptor) {
	var latest exec.ViewError
	for _, v := range e.rt.ViewErrors() {
		if v.View == d.Name && (latest.Count == 0 || v.At.After(latest.At)) {
			latest = v
		}
	}
	if latest.Count == 0 {
		return
	}
	rows, are := "rows", "are"
	if latest.Count == 1 {
		rows, are = "row", "is"
	}
	pgwire.Notice(ctx, fmt.Sprintf("%d %s failed during the backfill of materialized view %s and %s not in it", latest.Count, rows, d.Name, are),
		fmt.Sprintf("The latest failed in %s with SQLSTATE %s: %s. SELECT * FROM streamdb_view_errors WHERE view = %s lists them.",
			latest.Operator, latest.Code, latest.Message, "'"+strings.ReplaceAll(d.Name, "'", "''")+"'"))
}

// noColumnSample is how many of a stream's first messages CREATE looks
// at for fields that name its columns.
const noColumnSample = 10

// noColumnNotice tells the reader of stream name that n of the messages
// it decoded (of them; first: they were its first messages) name none of
// its columns, so their rows are all NULL; sample is the first such
// message. Columns declared under other
// names than the producer's fields (customer_id for "customerId") look
// just like that, and would otherwise pass unseen.
func noColumnNotice(ctx context.Context, name string, cols []types.Column, n, of uint64, first bool, sample []byte) {
	if n == 0 {
		return
	}
	var fields map[string]stdjson.RawMessage
	_ = stdjson.Unmarshal(sample, &fields) // it decoded as an object: this works
	keys := slices.Sorted(maps.Keys(fields))
	if len(keys) > 10 {
		keys = append(keys[:10], "...")
	}
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = fmt.Sprintf("%q", k)
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	has := "has no fields"
	if len(keys) > 0 {
		has = "has the fields " + strings.Join(quoted, ", ")
	}
	var msg string
	switch {
	case first && of == 1:
		msg = fmt.Sprintf("the first message of stream %s names none of its columns, so its row is all NULL", name)
	case first:
		msg = fmt.Sprintf("the first %d messages of stream %s name none of its columns, so their rows are all NULL", of, name)
	case of == 1:
		msg = fmt.Sprintf("the message read from stream %s names none of its columns, so its row is all NULL", name)
	default:
		msg = fmt.Sprintf("%d of the %d messages read from stream %s name none of its columns, so their rows are all NULL", n, of, name)
	}
	pgwire.Notice(ctx, msg,
		fmt.Sprintf("The first %s; the columns are %s. Fields map to columns by exact name: declare the columns as the producer names the fields (a quoted identifier keeps its case).",
			has, strings.Join(names, ", ")))
}

// checkStreamFields looks at the first messages stream d holds and sends
// noColumnNotice when those that decode name none of its columns,
// reporting whether it did. Errors reading them are left to the readers
// that follow.
func (e *Engine) checkStreamFields(ctx context.Context, d *catalog.Descriptor) bool {
	if d.Kind != catalog.KindStream {
		return false
	}
	cols, missing, err := exec.DescriptorMessageColumns(d)
	if err != nil {
		return false
	}
	first, err := e.streams.First(ctx, d)
	if err != nil || first == 0 {
		return false
	}
	last, err := e.streams.Last(ctx, d)
	if err != nil || last < first {
		return false
	}
	schema, err := d.Schema()
	if err != nil {
		return false
	}
	gen, err := binder.BindGenerated(d, schema)
	if err != nil {
		return false
	}
	dec := exec.NewMessageDecoder(cols, missing).WithMetadata(d)
	dec.SetGenerated(gen)
	var decoded uint64
	var sample []byte
	err = e.streams.Read(ctx, d, first, last, func(_ uint64, data []byte) error {
		before := dec.NoColumn()
		if _, err := dec.Decode(data); err == nil {
			decoded++
			if dec.NoColumn() > before && sample == nil {
				sample = slices.Clone(data)
			}
		}
		if decoded >= noColumnSample {
			return errStreamReadDone
		}
		return nil
	})
	if (err == nil || errors.Is(err, errStreamReadDone)) && decoded > 0 && dec.NoColumn() == decoded {
		noColumnNotice(ctx, d.Name, cols, dec.NoColumn(), decoded, true, sample)
		return true
	}
	return false
}
