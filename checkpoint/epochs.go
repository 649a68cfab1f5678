package checkpoint

// EpochSource is what the coordinator needs of the dataflow runtime: a
// moment at which no epoch commits, and the cut the state stands at then.
// node adapts the runtime to it, so checkpoint sees epochs and source
// positions, never operators.
type EpochSource interface {
	// AtEpochBoundary runs fn while no epoch commits; cut is the newest
	// committed epoch and every source's position in it.
	AtEpochBoundary(fn func(cut Cut) error) error
}

// Cut is what a checkpoint captures of the runtime: the newest committed
// epoch and every source's position in it.
type Cut struct {
	Epoch     uint64
	Positions []ViewPosition
}

// ViewPosition is where one source of a view's (or table's) pipeline
// stands in a committed epoch: the last JetStream sequence of its subject
// that the state holds. ViewID and Source name its position in the store.
type ViewPosition struct {
	ViewID  uint32
	View    string
	Source  int
	Stream  string
	Subject string
	Seq     uint64
}
