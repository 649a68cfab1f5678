package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/pgwire"
	"streamdb/plan"
)

// recentSample is how many of a stream's latest messages CREATE
// MATERIALIZED VIEW looks at for the members of the columns it reads.
const recentSample = 100

// checkViewColumns tells the creator of view d, for each stream its plan
// root reads, which of the columns it reads none of the stream's latest
// messages has a member for: those read NULL (or their ADD COLUMN
// default) in every such row, most often because the producer names or
// nests the field otherwise. Streams in noticed already had a notice
// that no column is named at all.
func (e *Engine) checkViewColumns(ctx context.Context, d *catalog.Descriptor, root plan.Node, noticed map[string]bool) {
	read := map[string]map[string]bool{} // stream -> member keys read
	var order []string
	for s, need := range exec.ColumnsRead(root) {
		name := s.Object.Name
		if read[name] == nil {
			read[name] = map[string]bool{}
			order = append(order, name)
		}
		for i, n := range need {
			if !n {
				continue
			}
			key := s.Cols[i].Name
			if s.Keys != nil {
				key = s.Keys[i]
			}
			read[name][key] = true
		}
	}
	slices.Sort(order)
	for _, name := range order {
		if noticed[name] {
			continue
		}
		src, ok := e.lookup(name)
		if !ok || src.Kind != catalog.KindStream {
			continue
		}
		e.recentColumnsNotice(ctx, d.Name, src, read[name])
	}
}

// recentColumnsNotice decodes the latest recentSample messages of stream
// src and sends a notice naming the columns among keys (member keys that
// view reads) that none of them has.
func (e *Engine) recentColumnsNotice(ctx context.Context, view string, src *catalog.Descriptor, keys map[string]bool) {
	members := messageMemberColumns(src)
	if members == nil {
		return
	}
	cols, missing, err := exec.DescriptorMessageColumns(src)
	if err != nil {
		return
	}
	schema, err := src.Schema()
	if err != nil {
		return
	}
	gen, err := binder.BindGenerated(src, schema)
	if err != nil {
		return
	}
	first, err := e.streams.First(ctx, src)
	if err != nil || first == 0 {
		return
	}
	last, err := e.streams.Last(ctx, src)
	if err != nil || last < first {
		return
	}
	from := first
	if last-first >= recentSample {
		from = last - recentSample + 1
	}
	dec := exec.NewMessageDecoder(cols, missing).WithMetadata(src)
	dec.SetGenerated(gen)
	if err := e.streams.Read(ctx, src, from, last, func(_ uint64, data []byte) error {
		_, _ = dec.Decode(data) // one that fails is skipped by the views too
		return nil
	}); err != nil {
		return
	}
	st := dec.KeyStats()
	if st.Decoded == 0 {
		return
	}
	seen := map[string]bool{}
	var carried []string
	for i, k := range st.Columns {
		if st.Seen[i] {
			seen[k] = true
			carried = append(carried, k)
		}
	}
	for _, k := range st.Keys {
		if k.Messages > 0 {
			carried = append(carried, k.Key)
		}
	}
	var lacking []string
	for _, c := range src.Columns {
		if key := c.MemberKey(); keys[key] && !seen[key] && members[key] != "" {
			lacking = append(lacking, c.Name)
		}
	}
	if len(lacking) == 0 {
		return
	}
	slices.Sort(carried)
	if len(carried) > 10 {
		carried = append(carried[:10], "...")
	}
	for i, k := range carried {
		if k != "..." {
			carried[i] = fmt.Sprintf("%q", k)
		}
	}
	latest := fmt.Sprintf("the latest %d messages", st.Decoded)
	if st.Decoded == 1 {
		latest = "the latest message"
	}
	what, null := fmt.Sprintf("column %s", lacking[0]), "it is"
	if len(lacking) > 1 {
		what, null = "columns "+strings.Join(lacking, ", "), "they are"
	}
	has := "They carry no members."
	if len(carried) > 0 {
		has = "They carry the keys " + strings.Join(carried, ", ") + "."
	}
	pgwire.Notice(ctx,
		fmt.Sprintf("%s of stream %s have no member for %s, which materialized view %s reads, so %s NULL in their rows", latest, src.Name, what, view, null),
		has+" A column reads the member of its exact name: declare it as the producer names the key (a quoted identifier keeps its case), "+
			"or read nested or changing members through a jsonb column (doc->>'key'), or the whole message as one jsonb column (CREATE STREAM ... WITH (whole_message = true)).")
}
