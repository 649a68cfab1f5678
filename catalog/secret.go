package catalog

// KindSecret is a value kept for the server's own use (CREATE SECRET),
// such as a source database's password: stored with the catalog, so that
// it survives restarts and goes back with ROLLBACK TO as other objects
// do, and never shown back.
const KindSecret ObjectKind = "secret"

// Secret holds a secret's value, encrypted: Sealed is the value sealed
// with AES-256-GCM (the nonce, then the ciphertext and tag) under the
// server's secret key, whose fingerprint is Key. The key is kept outside
// the state (package sql, secret_key.go), so a copy of the state, a
// checkpoint or a savepoint does not reveal the value. Value is the
// plaintext of a secret stored before values were encrypted; it is read,
// and replaced by Sealed at the next start.
type Secret struct {
	Value  string `json:"value,omitempty"`
	Sealed []byte `json:"sealed,omitempty"`
	Key    string `json:"key,omitempty"`
}
