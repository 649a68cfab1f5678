package pgcdc

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// TLS is what a connection to the source trusts and presents beyond its
// connection string, given as PEM text rather than as file names (the
// connection string may not name files, conn.go). An empty field means
// none: without RootCerts the system's roots are trusted, as sslmode
// alone does.
type TLS struct {
	// RootCerts are the certificate authorities that may sign the
	// source's server certificate.
	RootCerts []byte
	// ClientCert and ClientKey are the certificate and its private key
	// the connection presents (PostgreSQL's cert authentication); both
	// or neither.
	ClientCert, ClientKey []byte
}

// given reports whether t holds anything to apply.
func (t TLS) given() bool {
	return len(t.RootCerts) > 0 || len(t.ClientCert) > 0 || len(t.ClientKey) > 0
}

// TLSPart names one field of TLS, for errors.
type TLSPart int

const (
	PartRootCerts TLSPart = iota + 1
	PartClientCert
	PartClientKey
)

// TLSError is TLS material that cannot be used: Part says which field
// and Reason what is wrong with it, in words for a user. The PEM text is
// never quoted: it may be a private key.
type TLSError struct {
	Part   TLSPart
	Reason string
}

func (e *TLSError) Error() string { return e.Reason }

// TLSModeError is TLS material given with a connection string whose
// sslmode may connect without TLS (disable, allow or prefer, prefer being
// the default), where the certificates would be ignored or, worse, a
// connection that fails their check would go on unencrypted.
type TLSModeError struct {
	// Mode is the connection string's sslmode: "disable", "allow" or
	// "prefer".
	Mode string
}

func (e *TLSModeError) Error() string {
	return fmt.Sprintf("TLS certificates were given but sslmode is %s", e.Mode)
}

// sslMode is how pgconn set up TLS for a connection string's sslmode.
type sslMode int

const (
	modeDisable     sslMode = iota // no TLS
	modeOptional                   // allow or prefer: TLS, or not
	modeRequire                    // TLS, no check of the server's certificate
	modeVerifyChain                // verify-ca: the chain, not the host name
	modeVerifyFull                 // verify-full: the chain and the host name
)

// parsedSSLMode reads back the sslmode pgconn parsed, from the TLS
// configurations it made: one per host and mode to try (cfg's own, then
// its fallbacks'). Reading the result rather than the string keeps the
// sslmode rules (defaults, sslnegotiation=direct) pgconn's.
func parsedSSLMode(cfg *pgconn.Config) (sslMode, string) {
	configs := []*tls.Config{cfg.TLSConfig}
	for _, f := range cfg.Fallbacks {
		configs = append(configs, f.TLSConfig)
	}
	plain := 0
	for _, c := range configs {
		if c == nil {
			plain++
		}
	}
	switch {
	case plain == len(configs):
		return modeDisable, "disable"
	case plain > 0 && configs[0] == nil:
		return modeOptional, "allow"
	case plain > 0:
		return modeOptional, "prefer"
	case !configs[0].InsecureSkipVerify:
		return modeVerifyFull, "verify-full"
	case configs[0].VerifyPeerCertificate != nil:
		return modeVerifyChain, "verify-ca"
	default:
		return modeRequire, "require"
	}
}

// material is TLS decoded: the root pool (nil for the system's) and the
// client certificate (nil for none).
type material struct {
	roots  *x509.CertPool
	client *tls.Certificate
}

// decode checks t's PEM text and decodes it.
func (t TLS) decode() (material, error) {
	var m material
	if len(t.RootCerts) > 0 {
		certs, err := pemCertificates(t.RootCerts)
		if err != nil {
			return m, &TLSError{Part: PartRootCerts, Reason: err.Error()}
		}
		m.roots = x509.NewCertPool()
		for _, c := range certs {
			m.roots.AddCert(c)
		}
	}
	switch {
	case len(t.ClientCert) > 0 && len(t.ClientKey) == 0:
		return m, &TLSError{Part: PartClientKey, Reason: "a client certificate needs its private key"}
	case len(t.ClientKey) > 0 && len(t.ClientCert) == 0:
		return m, &TLSError{Part: PartClientCert, Reason: "a client private key needs its certificate"}
	case len(t.ClientCert) > 0:
		if _, err := pemCertificates(t.ClientCert); err != nil {
			return m, &TLSError{Part: PartClientCert, Reason: err.Error()}
		}
		if err := checkPEMKey(t.ClientKey); err != nil {
			return m, &TLSError{Part: PartClientKey, Reason: err.Error()}
		}
		pair, err := tls.X509KeyPair(t.ClientCert, t.ClientKey)
		if err != nil {
			return m, &TLSError{Part: PartClientKey, Reason: "the private key does not match the client certificate, or is of a kind TLS does not use"}
		}
		m.client = &pair
	}
	return m, nil
}

// pemCertificates reads every CERTIFICATE block of text; there must be
// one at least, and nothing else but blank space between them.
func pemCertificates(text []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := text
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("it holds a PEM %s block where a CERTIFICATE was expected", block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, errors.New("a CERTIFICATE block in it is not a valid X.509 certificate")
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("it holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
	}
	if len(strings.TrimSpace(string(rest))) > 0 {
		return nil, errors.New("it holds text after its last PEM certificate")
	}
	return certs, nil
}

// checkPEMKey checks that text is one unencrypted PEM private key.
func checkPEMKey(text []byte) error {
	block, _ := pem.Decode(text)
	switch {
	case block == nil:
		return errors.New("it holds no PEM private key (-----BEGIN PRIVATE KEY-----)")
	case block.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(block.Headers["Proc-Type"], "ENCRYPTED"):
		return errors.New("its private key is encrypted; streamdb takes it unencrypted (the secret itself is stored encrypted)")
	case !strings.HasSuffix(block.Type, "PRIVATE KEY"):
		return fmt.Errorf("it holds a PEM %s block where a PRIVATE KEY was expected", block.Type)
	}
	return nil
}

// applyTLS makes cfg's connections (its own and its fallbacks') trust
// t's roots and present t's client certificate, under cfg's sslmode as
// libpq applies a root certificate file: verify-full checks the chain
// and the host name, verify-ca the chain only, and require with roots
// given behaves as verify-ca. An sslmode that may connect without TLS is
// refused (TLSModeError) when t holds anything.
func applyTLS(cfg *pgconn.Config, t TLS) error {
	if !t.given() {
		return nil
	}
	mode, name := parsedSSLMode(cfg)
	if mode == modeDisable || mode == modeOptional {
		return &TLSModeError{Mode: name}
	}
	m, err := t.decode()
	if err != nil {
		return err
	}
	if mode == modeRequire && m.roots != nil {
		mode = modeVerifyChain
	}
	cfg.TLSConfig = withMaterial(cfg.TLSConfig, mode, m)
	for _, f := range cfg.Fallbacks {
		f.TLSConfig = withMaterial(f.TLSConfig, mode, m)
	}
	return nil
}

// withMaterial returns a copy of c (pgconn's configuration for one
// host, which keeps its server name and protocols) that checks the
// server's certificate as mode says against m's roots and presents m's
// client certificate.
func withMaterial(c *tls.Config, mode sslMode, m material) *tls.Config {
	out := c.Clone()
	if m.client != nil {
		out.Certificates = []tls.Certificate{*m.client}
	}
	if m.roots == nil {
		return out
	}
	out.RootCAs = m.roots
	switch mode {
	case modeVerifyFull:
		out.InsecureSkipVerify = false
		out.VerifyPeerCertificate = nil
	case modeVerifyChain:
		// The standard check would compare the host name too.
		out.InsecureSkipVerify = true
		out.VerifyPeerCertificate = verifyChain(m.roots)
	}
	return out
}

// verifyChain checks that the server's certificate chains to roots,
// whatever host it names (sslmode=verify-ca).
func verifyChain(roots *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("the server sent no certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
		var leaf *x509.Certificate
		for i, der := range raw {
			c, err := x509.ParseCertificate(der)
			if err != nil {
				return fmt.Errorf("the server's certificate cannot be parsed: %w", err)
			}
			if i == 0 {
				leaf = c
			} else {
				opts.Intermediates.AddCert(c)
			}
		}
		_, err := leaf.Verify(opts)
		return err
	}
}

// CertificateRejected reports whether err is the source's server
// certificate failing the check sslmode asks for: signed by no trusted
// authority, naming another host, or expired.
func CertificateRejected(err error) bool {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verification *tls.CertificateVerificationError
	return errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) || errors.As(err, &verification)
}
