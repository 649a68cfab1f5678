package testutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCA is a certificate authority made at run time, for TLS tests.
type TestCA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// CertFile is the CA certificate in PEM (what sslrootcert names).
	CertFile string
	// Pool holds the CA certificate, for a tls.Config's RootCAs.
	Pool *x509.CertPool

	dir    string
	serial int64
}

// NewTestCA creates a CA (ECDSA P-256, valid for a day) in a temporary
// directory.
func NewTestCA(t testing.TB) *TestCA {
	t.Helper()
	ca := &TestCA{dir: t.TempDir(), serial: 1}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(ca.serial),
		Subject:               pkix.Name{CommonName: "streamdb test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if ca.Cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	ca.Key = key
	ca.CertFile = filepath.Join(ca.dir, "ca.crt")
	writePEM(t, ca.CertFile, "CERTIFICATE", der)
	ca.Pool = x509.NewCertPool()
	ca.Pool.AddCert(ca.Cert)
	return ca
}

// ServerCert issues a server certificate for hosts (IP addresses or DNS
// names; the first is also the common name) and writes it and its key as
// PEM files (the key with mode 0600). It returns their paths.
func (ca *TestCA) ServerCert(t testing.TB, hosts ...string) (certFile, keyFile string) {
	t.Helper()
	return ca.issue(t, "server", hosts[0], hosts, x509.ExtKeyUsageServerAuth)
}

// ClientCert issues a client certificate whose common name is user (what
// PostgreSQL's cert authentication compares with the role) and writes it
// and its key as PEM files. It returns their paths.
func (ca *TestCA) ClientCert(t testing.TB, user string) (certFile, keyFile string) {
	t.Helper()
	return ca.issue(t, "client", user, nil, x509.ExtKeyUsageClientAuth)
}

// issue makes a certificate for commonName and hosts signed by the CA.
func (ca *TestCA) issue(t testing.TB, prefix, commonName string, hosts []string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(ca.dir, prefix+big.NewInt(ca.serial).String())
	certFile, keyFile = name+".crt", name+".key"
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	return certFile, keyFile
}

// ClientTLS is a tls.Config that trusts only the CA and checks that the
// server's certificate names serverName (what sslmode=verify-full does).
func (ca *TestCA) ClientTLS(serverName string) *tls.Config {
	return &tls.Config{RootCAs: ca.Pool, ServerName: serverName}
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
