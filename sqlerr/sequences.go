package sqlerr

// SQLSTATEs of sequences and identity columns.
const (
	SequenceGeneratorLimitExceeded = "2200H"
	GeneratedAlways                = "428C9"
)
