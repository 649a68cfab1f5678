package pgwire

import (
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"hash"
	"net"
	"os"
)

// LoadTLSConfig reads a PEM certificate (chain) and private key for the
// server's TLS. It returns the configuration and warns (in warning) when the
// key file can be read by other users, which PostgreSQL refuses.
func LoadTLSConfig(certFile, keyFile string) (cfg *tls.Config, warning string, err error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, "", fmt.Errorf("load TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, "", fmt.Errorf("parse TLS certificate %s: %w", certFile, err)
		}
	}
	if st, err := os.Stat(keyFile); err == nil && st.Mode().Perm()&0o077 != 0 {
		warning = fmt.Sprintf("private key file %s has group or world access (mode %v); it should be 0600", keyFile, st.Mode().Perm())
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
	}, warning, nil
}

// endPointHash is the tls-server-end-point channel binding data of a
// certificate (RFC 5929 section 4.1): its DER hashed with the hash of its
// signature algorithm, SHA-256 where that is MD5 or SHA-1. It returns nil
// for signature algorithms the binding is undefined for (Ed25519): then
// SCRAM-SHA-256-PLUS is not offered, as PostgreSQL does.
func endPointHash(cert *x509.Certificate) []byte {
	var h hash.Hash
	switch cert.SignatureAlgorithm {
	case x509.MD5WithRSA, x509.SHA1WithRSA, x509.ECDSAWithSHA1,
		x509.SHA256WithRSA, x509.SHA256WithRSAPSS, x509.ECDSAWithSHA256:
		h = sha256.New()
	case x509.SHA384WithRSA, x509.SHA384WithRSAPSS, x509.ECDSAWithSHA384:
		h = sha512.New384()
	case x509.SHA512WithRSA, x509.SHA512WithRSAPSS, x509.ECDSAWithSHA512:
		h = sha512.New()
	default:
		return nil
	}
	h.Write(cert.Raw)
	return h.Sum(nil)
}

// isLocal reports whether a client address is on this host: a loopback IP
// (127.0.0.0/8, ::1) or a Unix socket. An in-memory pipe (tests) counts as
// local too. Anything else, or an address that cannot be read, is remote.
func isLocal(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	case nil:
		return false
	}
	return addr.Network() == "pipe"
}
