package storage

// ViewPosition is where one source of a view's (or table's) pipeline
// stands in a committed epoch: the last JetStream sequence of its subject
// that the state holds.
type ViewPosition struct {
	ViewID  uint32
	View    string
	Source  int
	Stream  string
	Subject string
	Seq     uint64
}

// Cut is what the runtime tells a checkpoint about the state it captures:
// the newest committed epoch and every source's position in it.
type Cut struct {
	Epoch     uint64
	Positions []ViewPosition
}
