package exec

import (
	"sync/atomic"
	"unsafe"

	"streamdb/types"
)

var datumSize = int(unsafe.Sizeof(types.Datum{}))

// chunkRef counts the pipelines a shared chunk was sent to that have not
// given it back; the last one returns it to its reader to decode into
// again. A pipeline whose operators keep rows (see borrowsRows) never
// gives it back, so the chunk is then never reused.
type chunkRef struct {
	refs atomic.Int32
	r    *subjectReader
}

// release gives m's chunk back, if it came from a subject reader.
func (m pipelineMsg) release() {
	if m.ref == nil || m.chunk == nil {
		return
	}
	if m.ref.refs.Add(-1) == 0 {
		m.ref.r.recycle(m.chunk)
	}
}

// Recycled chunks a reader keeps: up to freeChunks, holding at most
// freeBytes of datums. A reader runs ahead of its pipelines in bursts (a
// pipeline stalls at barriers while the reader fills the 64-chunk queue),
// so a few kept chunks would not cover the next burst.
const (
	freeChunks = 16
	freeBytes  = 8 << 20
)

// recycle takes back a chunk every pipeline is done with; beyond the
// bounds above, the chunk is dropped.
func (r *subjectReader) recycle(c *Chunk) {
	if (len(r.free)+1)*cap(c.base)*datumSize > freeBytes {
		return
	}
	select {
	case r.free <- c:
	default:
	}
}

// feedOrder keeps the order of each input's messages across a merge of
// readers (shared_source_merge.go): a pipeline input takes messages from
// one reader, its feeder, until that reader's handoff names the next;
// messages of the next that arrive earlier wait. Inputs that are not fed
// by subject readers (from is nil) pass straight through.
type feedOrder struct {
	feeder []*subjectReader
	early  [][]pipelineMsg
}

// admit returns the messages that may be handled now, in order, given
// that m arrived. first returns the reader an input starts with.
func (f *feedOrder) admit(m pipelineMsg, first func(src uint16) *subjectReader) []pipelineMsg {
	if m.from == nil {
		return []pipelineMsg{m}
	}
	for int(m.src) >= len(f.feeder) {
		f.feeder = append(f.feeder, nil)
		f.early = append(f.early, nil)
	}
	i := m.src
	if f.feeder[i] == nil {
		f.feeder[i] = first(i)
	}
	if m.from != f.feeder[i] {
		f.early[i] = append(f.early[i], m)
		return nil
	}
	if m.handoff == nil {
		return []pipelineMsg{m}
	}
	f.feeder[i] = m.handoff
	var out []pipelineMsg
	rest := f.early[i]
	f.early[i] = nil
	for _, e := range rest {
		out = append(out, f.admit(e, first)...)
	}
	return out
}

// firstReader returns the reader source input src starts with.
func (p *pipeline) firstReader(src uint16) *subjectReader {
	return p.sources[src].firstReader()
}
