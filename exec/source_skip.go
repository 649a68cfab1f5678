package exec

import "context"

// skipMessage skips the message just taken (at s.pos.Seq), which failed
// to decode with err: it is counted (SHOW STREAMS), and the pipeline is
// told, after the rows of the messages before it, so that the view lists
// it in streamdb_view_errors, or stops there if it is on_error = 'fail'.
// prev is the sequence of the message taken before it. Caller holds mu.
func (s *sourceReader) skipMessage(ctx context.Context, prev uint64, err error) {
	seq := s.pos.Seq
	s.pos.Seq = prev // the chunk sent now ends before the skipped message
	ok := s.flushLocked(ctx)
	s.pos.Seq = seq
	s.pos.Skipped++
	s.skippedTotal.Store(s.pos.Skipped)
	if s.pos.Skipped <= 10 || s.pos.Skipped%1000 == 0 {
		s.log.Warn("skipping malformed message", "stream", s.name, "seq", seq, "skipped", s.pos.Skipped, "err", err)
	}
	if ok {
		s.send(ctx, pipelineMsg{src: s.idx, skipped: err, pos: s.pos})
	}
}
