package arch

// The control log (cluster/control) records what node hands it through
// its Source interface: it never reaches the runtime or the checkpoint
// coordinator itself, so that a replay or another server reads the same
// records without either.
func init() {
	forbidden[[2]string{"cluster/control", "exec"}] = "the control log sees epochs and positions through its Source interface, which node adapts the runtime to"
	forbidden[[2]string{"cluster/control", "checkpoint"}] = "the control log records checkpoints through its Source interface, not the coordinator's types"
	forbidden[[2]string{"cluster/control", "storage"}] = "the control log lives in JetStream; state is node's"
}
