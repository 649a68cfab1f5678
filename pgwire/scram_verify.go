package pgwire

import "crypto/subtle"

// Verify reports whether password is the one v was derived from: it
// derives the keys again with v's salt and iteration count and compares
// them in constant time. It serves logins that carry a plain password
// over TLS or loopback (the web console's HTTP Basic authentication).
func (v *SCRAMVerifier) Verify(password string) bool {
	d, err := DeriveSCRAMVerifier(password, v.Salt, v.Iterations)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(d.StoredKey[:], v.StoredKey[:]) == 1 &&
		subtle.ConstantTimeCompare(d.ServerKey[:], v.ServerKey[:]) == 1
}
