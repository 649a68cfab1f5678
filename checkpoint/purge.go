package checkpoint

// What JetStream must keep for restores: each retained checkpoint and
// savepoint restores its views at its stored source positions and replays
// from there, so the input after the lowest of them on a subject must
// stay. Purging below it is safe for every point the server could be
// restored to by recovery, ROLLBACK TO or --restore-from from its own
// directories, or by a restore from its checkpoint bucket.

// SetAfterCheckpoint has fn run after each completed checkpoint, on the
// goroutine that took it (fn should hand long work to another one).
func (c *Coordinator) SetAfterCheckpoint(fn func(*Meta)) {
	c.afterCheckpoint.Store(&fn)
}

func (c *Coordinator) notifyCompleted(m *Meta) {
	if fn := c.afterCheckpoint.Load(); fn != nil {
		(*fn)(m)
	}
}

// RetainedPositions returns the source positions of every completed
// checkpoint and savepoint in every directory the server has used or is
// configured to use, whoever made them, and of the checkpoints its bucket
// kept at the last retention: any of them may be restored.
func (c *Coordinator) RetainedPositions() ([]Position, error) {
	s := c.settings()
	c.recMu.Lock()
	rec := c.rec
	c.recMu.Unlock()
	out := c.remotePositions()
	for _, dir := range recordDirs(rec, s.Dir, s.SavepointsDir) {
		metas, err := List(dir)
		if err != nil {
			return nil, err
		}
		for _, m := range metas {
			if m.Status != "" && m.Status != StatusCompleted {
				continue
			}
			out = append(out, m.Positions...)
		}
	}
	return out, nil
}
