package catalog

// KindSecret is a value kept for the server's own use (CREATE SECRET),
// such as a source database's password: stored with the catalog, so that
// it survives restarts and goes back with ROLLBACK TO as other objects
// do, and never shown back.
const KindSecret ObjectKind = "secret"

// Secret holds a secret's value.
type Secret struct {
	Value string `json:"value"`
}
