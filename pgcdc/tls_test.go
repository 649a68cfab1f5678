package pgcdc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"
)

// testCert is a certificate and its key, issued by a CA made in the test.
type testCert struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	keyPEM  []byte
}

// issue makes a certificate for name (an IP address or a DNS name),
// signed by parent, or self-signed as a CA when parent is nil.
func issue(t *testing.T, parent *testCert, name string, serial int64) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{name}
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &testCert{cert: cert, key: key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})}
}

// TestParsedSSLMode: the sslmode is read back from pgconn's parsed
// configuration for every mode, in both connection string forms and with
// two hosts (one fallback per host); this fails if a pgx upgrade changes
// the shape it relies on.
func TestParsedSSLMode(t *testing.T) {
	for _, c := range []struct {
		mode string
		want sslMode
	}{
		{"disable", modeDisable}, {"allow", modeOptional}, {"prefer", modeOptional}, {"", modeOptional},
		{"require", modeRequire}, {"verify-ca", modeVerifyChain}, {"verify-full", modeVerifyFull},
	} {
		for _, dsn := range []string{
			"host=db user=u sslmode=" + c.mode,
			"host=db,db2 user=u sslmode=" + c.mode,
			"postgres://u@db/shop?sslmode=" + c.mode,
		} {
			if c.mode == "" {
				dsn = "host=db user=u"
			}
			cfg, err := ParseConfig(dsn)
			if err != nil {
				t.Fatalf("ParseConfig(%q): %v", dsn, err)
			}
			got, name := parsedSSLMode(cfg)
			if got != c.want || (c.mode != "" && name != c.mode) {
				t.Errorf("parsedSSLMode(%q) = %d %q, want %d %q", dsn, got, name, c.want, c.mode)
			}
		}
	}
}

// TestApplyTLSRefuses: TLS material with an sslmode that may connect
// without TLS is refused, naming the mode; PEM text that is not what its
// field needs is refused naming the field, without quoting the text.
func TestApplyTLSRefuses(t *testing.T) {
	ca := issue(t, nil, "test CA", 1)
	client := issue(t, ca, "repl", 2)
	other := issue(t, ca, "other", 3)
	for _, mode := range []string{"disable", "allow", "prefer"} {
		err := Endpoint{DSN: "host=db sslmode=" + mode, TLS: TLS{RootCerts: ca.certPEM}}.Check()
		if me, ok := errors.AsType[*TLSModeError](err); !ok || me.Mode != mode {
			t.Errorf("sslmode=%s with a CA: %v, want a TLSModeError naming %s", mode, err, mode)
		}
	}
	if err := (Endpoint{DSN: "host=db", TLS: TLS{ClientCert: client.certPEM, ClientKey: client.keyPEM}}).Check(); !errorIs[*TLSModeError](err) {
		t.Errorf("the default sslmode with a client certificate: %v, want a TLSModeError", err)
	}
	encrypted := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1, 2, 3}})
	for _, c := range []struct {
		name string
		tls  TLS
		part TLSPart
	}{
		{"CA not PEM", TLS{RootCerts: []byte("not a certificate")}, PartRootCerts},
		{"CA is a key", TLS{RootCerts: ca.keyPEM}, PartRootCerts},
		{"CA then junk", TLS{RootCerts: append(append([]byte{}, ca.certPEM...), "junk"...)}, PartRootCerts},
		{"cert without key", TLS{ClientCert: client.certPEM}, PartClientKey},
		{"key without cert", TLS{ClientKey: client.keyPEM}, PartClientCert},
		{"cert not PEM", TLS{ClientCert: []byte("x"), ClientKey: client.keyPEM}, PartClientCert},
		{"key not PEM", TLS{ClientCert: client.certPEM, ClientKey: []byte("x")}, PartClientKey},
		{"key encrypted", TLS{ClientCert: client.certPEM, ClientKey: encrypted}, PartClientKey},
		{"key of another cert", TLS{ClientCert: client.certPEM, ClientKey: other.keyPEM}, PartClientKey},
	} {
		err := Endpoint{DSN: "host=db sslmode=verify-full", TLS: c.tls}.Check()
		te, ok := errors.AsType[*TLSError](err)
		if !ok || te.Part != c.part {
			t.Errorf("%s: %v, want a TLSError of part %d", c.name, err, c.part)
			continue
		}
	}
	good := TLS{RootCerts: append(append([]byte{}, ca.certPEM...), other.certPEM...), ClientCert: client.certPEM, ClientKey: client.keyPEM}
	for _, mode := range []string{"require", "verify-ca", "verify-full"} {
		if err := (Endpoint{DSN: "host=db,db2 sslmode=" + mode, TLS: good}).Check(); err != nil {
			t.Errorf("sslmode=%s with a CA and a client certificate: %v", mode, err)
		}
	}
}

func errorIs[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}

// TestApplyTLSHandshake runs TLS handshakes against a server whose
// certificate a test CA issued for 127.0.0.1, with the configurations
// applyTLS makes: verify-full checks chain and host, verify-ca and
// require-with-a-CA the chain only, and the client certificate is
// presented.
func TestApplyTLSHandshake(t *testing.T) {
	ca := issue(t, nil, "test CA", 1)
	wrongCA := issue(t, nil, "wrong CA", 1)
	server := issue(t, ca, "127.0.0.1", 2)
	client := issue(t, ca, "repl", 3)
	serverPair, err := tls.X509KeyPair(server.certPEM, server.keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(ca.cert)

	// handshake connects to host through a pipe; it returns the
	// certificates the server saw and the client's error.
	handshake := func(host, mode string, material TLS) ([]*x509.Certificate, error) {
		cfg, err := ParseConfig("host=" + host + " sslmode=" + mode)
		if err != nil {
			t.Fatal(err)
		}
		if err := applyTLS(cfg, material); err != nil {
			t.Fatalf("applyTLS(%s, %s): %v", host, mode, err)
		}
		// A TCP connection, not net.Pipe: a failing side's alert must not
		// block on the other side's unread writes.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		seen := make(chan []*x509.Certificate, 1)
		go func() {
			b, err := ln.Accept()
			if err != nil {
				seen <- nil
				return
			}
			_ = b.SetDeadline(time.Now().Add(time.Minute))
			s := tls.Server(b, &tls.Config{Certificates: []tls.Certificate{serverPair}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: clientCAs})
			_ = s.Handshake()
			seen <- s.ConnectionState().PeerCertificates
			s.Close()
		}()
		a, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = a.SetDeadline(time.Now().Add(time.Minute))
		c := tls.Client(a, cfg.TLSConfig)
		err = c.Handshake()
		c.Close()
		return <-seen, err
	}
	right := TLS{RootCerts: ca.certPEM}
	wrong := TLS{RootCerts: wrongCA.certPEM}
	for _, c := range []struct {
		host, mode string
		tls        TLS
		ok         bool
	}{
		{"127.0.0.1", "verify-full", right, true},
		{"127.0.0.2", "verify-full", right, false}, // the certificate names another host
		{"127.0.0.1", "verify-full", wrong, false},
		{"127.0.0.2", "verify-ca", right, true},
		{"127.0.0.1", "verify-ca", wrong, false},
		{"127.0.0.2", "require", right, true},
		{"127.0.0.1", "require", wrong, false}, // require with a CA is verify-ca
	} {
		_, err := handshake(c.host, c.mode, c.tls)
		if (err == nil) != c.ok {
			t.Errorf("host %s sslmode=%s: handshake error %v, want ok %v", c.host, c.mode, err, c.ok)
		}
		if err != nil && !CertificateRejected(err) {
			t.Errorf("host %s sslmode=%s: CertificateRejected(%v) = false", c.host, c.mode, err)
		}
	}
	peer, err := handshake("127.0.0.1", "verify-full", TLS{RootCerts: ca.certPEM, ClientCert: client.certPEM, ClientKey: client.keyPEM})
	if err != nil || len(peer) == 0 || peer[0].Subject.CommonName != "repl" {
		t.Errorf("handshake with a client certificate: error %v, server saw %d certificates", err, len(peer))
	}
}
