package pgwire

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net"
	"strings"
	"testing"

	"streamdb/sqlerr"
)

// RFC 7677 section 3: user "user", password "pencil".
const (
	rfcSalt        = "W22ZaJ0SNY7soEsUEjb6gQ=="
	rfcClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
	rfcServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	rfcServerFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	rfcClientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	rfcServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
)

func rfcVerifier(t *testing.T, password string) *SCRAMVerifier {
	t.Helper()
	salt, _ := base64.StdEncoding.DecodeString(rfcSalt)
	v, err := DeriveSCRAMVerifier(password, salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSCRAMRFC7677Vector(t *testing.T) {
	x := &scramExchange{v: rfcVerifier(t, "pencil"), serverNonce: rfcServerNonce}
	if got := x.mechanisms(); len(got) != 1 || got[0] != scramSHA256 {
		t.Fatalf("mechanisms without TLS: %v", got)
	}
	sf, serr := x.clientFirst(scramSHA256, []byte(rfcClientFirst))
	if serr != nil {
		t.Fatal(serr)
	}
	if string(sf) != rfcServerFirst {
		t.Fatalf("server-first-message\n got %s\nwant %s", sf, rfcServerFirst)
	}
	final, err := x.clientFinal([]byte(rfcClientFinal))
	if err != nil {
		t.Fatal(err)
	}
	if string(final) != rfcServerFinal {
		t.Fatalf("server-final-message\n got %s\nwant %s", final, rfcServerFinal)
	}
}

func TestSCRAMWrongPassword(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    *scramExchange
	}{
		{"wrong password", &scramExchange{v: rfcVerifier(t, "pencil2"), serverNonce: rfcServerNonce}},
		// The right proof for a mock verifier still fails.
		{"unknown user", &scramExchange{v: rfcVerifier(t, "pencil"), mock: true, serverNonce: rfcServerNonce}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, serr := tc.x.clientFirst(scramSHA256, []byte(rfcClientFirst)); serr != nil {
				t.Fatal(serr)
			}
			if _, err := tc.x.clientFinal([]byte(rfcClientFinal)); !errors.Is(err, errPasswordFailed) {
				t.Fatalf("got %v, want errPasswordFailed", err)
			}
		})
	}
}

func TestSCRAMVerifierFormat(t *testing.T) {
	v := rfcVerifier(t, "pencil")
	s := v.String()
	if !strings.HasPrefix(s, "SCRAM-SHA-256$4096:"+rfcSalt+"$") {
		t.Fatalf("verifier %s", s)
	}
	back, err := ParseSCRAMVerifier(s)
	if err != nil || back.String() != s {
		t.Fatalf("round trip: %v %v", back, err)
	}
	for _, bad := range []string{"", "md5abc", "SCRAM-SHA-256$x:AAAA$AAAA:AAAA", "SCRAM-SHA-256$4096:" + rfcSalt + "$AAAA:AAAA", "SCRAM-SHA-256$0:" + rfcSalt + "$" + s[strings.LastIndex(s, "$")+1:]} {
		if _, err := ParseSCRAMVerifier(bad); err == nil {
			t.Errorf("ParseSCRAMVerifier(%q) accepted", bad)
		}
	}
	if strings.Contains(s, "pencil") {
		t.Fatal("verifier holds the password")
	}
	fresh, err := NewSCRAMVerifier("pencil")
	if err != nil || bytes.Equal(fresh.Salt, v.Salt) || len(fresh.Salt) != scramSaltLen || fresh.Iterations != SCRAMIterations {
		t.Fatalf("NewSCRAMVerifier: %+v %v", fresh, err)
	}
}

func TestSASLprep(t *testing.T) {
	for in, want := range map[string]string{
		"pencil":          "pencil",
		"I\u00ADX":        "IX",            // mapped to nothing
		"a\u00A0b":        "a b",           // non-ASCII space
		"\u2168":          "IX",            // NFKC
		"\u00AA":          "a",             // NFKC
		"a\u0007\u00e9":   "a\u0007\u00e9", // prohibited: used unchanged
		"caf\u0065\u0301": "caf\u00e9",
	} {
		if got := saslPrep(in); got != want {
			t.Errorf("saslPrep(%q) = %q, want %q", in, got, want)
		}
	}
}

// scramClient computes a client's side of an exchange, for the channel
// binding tests.
func scramClientFinal(t *testing.T, password, clientFirstBare, serverFirst, gs2Header string, cbData []byte) string {
	t.Helper()
	attrs := map[string]string{}
	for _, kv := range strings.Split(serverFirst, ",") {
		attrs[kv[:1]] = kv[2:]
	}
	salt, _ := base64.StdEncoding.DecodeString(attrs["s"])
	salted, err := pbkdf2.Key(sha256.New, password, salt, 4096, 32)
	if err != nil {
		t.Fatal(err)
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	clientKey := mac(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	withoutProof := "c=" + base64.StdEncoding.EncodeToString(append([]byte(gs2Header), cbData...)) + ",r=" + attrs["r"]
	sig := mac(stored[:], clientFirstBare+","+serverFirst+","+withoutProof)
	proof := make([]byte, 32)
	subtle.XORBytes(proof, clientKey, sig)
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)
}

func TestSCRAMChannelBinding(t *testing.T) {
	cb := sha256.Sum256([]byte("certificate"))
	newX := func() *scramExchange { return &scramExchange{v: rfcVerifier(t, "pencil"), cbData: cb[:]} }
	if got := newX().mechanisms(); len(got) != 2 || got[0] != scramSHA256Plus {
		t.Fatalf("mechanisms with TLS: %v", got)
	}
	const bare = "n=,r=abcdefghijkl"
	const plusHeader = "p=tls-server-end-point,,"

	// Bound to the right certificate: accepted.
	x := newX()
	sf, serr := x.clientFirst(scramSHA256Plus, []byte(plusHeader+bare))
	if serr != nil {
		t.Fatal(serr)
	}
	if _, err := x.clientFinal([]byte(scramClientFinal(t, "pencil", bare, string(sf), plusHeader, cb[:]))); err != nil {
		t.Fatalf("bound exchange: %v", err)
	}

	// Bound to another certificate (a man in the middle): refused.
	x = newX()
	sf, _ = x.clientFirst(scramSHA256Plus, []byte(plusHeader+bare))
	other := sha256.Sum256([]byte("other certificate"))
	_, err := x.clientFinal([]byte(scramClientFinal(t, "pencil", bare, string(sf), plusHeader, other[:])))
	if sqlerr.Code(err) != sqlerr.ProtocolViolation || !strings.Contains(err.Error(), "channel binding check failed") {
		t.Fatalf("wrong binding: %v", err)
	}

	// Without binding over TLS ("n"): allowed, as PostgreSQL allows it
	// (clients with channel_binding=disable).
	x = newX()
	sf, serr = x.clientFirst(scramSHA256, []byte("n,,"+bare))
	if serr != nil {
		t.Fatal(serr)
	}
	if _, err := x.clientFinal([]byte(scramClientFinal(t, "pencil", bare, string(sf), "n,,", nil))); err != nil {
		t.Fatalf("unbound exchange: %v", err)
	}

	// The client could bind but thinks the server cannot: a downgrade.
	if _, serr := newX().clientFirst(scramSHA256, []byte("y,,"+bare)); serr == nil || serr.Code != "28000" {
		t.Fatalf("y flag over TLS: %v", serr)
	}
	// Without TLS, "y" is fine and PLUS is not on offer.
	plain := &scramExchange{v: rfcVerifier(t, "pencil")}
	if _, serr := plain.clientFirst(scramSHA256, []byte("y,,"+bare)); serr != nil {
		t.Fatalf("y flag without TLS: %v", serr)
	}
	plain = &scramExchange{v: rfcVerifier(t, "pencil")}
	if _, serr := plain.clientFirst(scramSHA256Plus, []byte(plusHeader+bare)); serr == nil || serr.Code != sqlerr.ProtocolViolation {
		t.Fatalf("PLUS without TLS: %v", serr)
	}
	// Mechanism and flag must agree.
	if _, serr := newX().clientFirst(scramSHA256Plus, []byte("n,,"+bare)); serr == nil {
		t.Fatal("PLUS with flag n accepted")
	}
	if _, serr := newX().clientFirst(scramSHA256, []byte(plusHeader+bare)); serr == nil {
		t.Fatal("SCRAM-SHA-256 with flag p accepted")
	}
	if _, serr := newX().clientFirst(scramSHA256Plus, []byte("p=tls-unique,,"+bare)); serr == nil {
		t.Fatal("tls-unique accepted")
	}
}

func TestSCRAMMalformed(t *testing.T) {
	for _, first := range []string{"", "x,,n=,r=a", "n,a=bob,n=,r=a", "n,,m=ext,n=,r=a", "n,,n=", "n,,n=,r=", "n,,n=,r=a b", "n"} {
		x := &scramExchange{v: rfcVerifier(t, "pencil")}
		if _, serr := x.clientFirst(scramSHA256, []byte(first)); serr == nil {
			t.Errorf("client-first %q accepted", first)
		}
	}
	if _, serr := (&scramExchange{v: rfcVerifier(t, "pencil")}).clientFirst("PLAIN", []byte(rfcClientFirst)); serr == nil {
		t.Error("mechanism PLAIN accepted")
	}
	for _, final := range []string{
		"",
		"c=eSws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=", // header mismatch
		"c=biws,r=rOprNGfwEbeRWgbNEkqO,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",                               // nonce
		"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA",                                         // short proof
		rfcClientFinal + ",x=1", // garbage after the proof
		"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
	} {
		x := &scramExchange{v: rfcVerifier(t, "pencil"), serverNonce: rfcServerNonce}
		if _, serr := x.clientFirst(scramSHA256, []byte(rfcClientFirst)); serr != nil {
			t.Fatal(serr)
		}
		_, err := x.clientFinal([]byte(final))
		if err == nil || errors.Is(err, errPasswordFailed) {
			t.Errorf("client-final %q: %v, want a protocol error", final, err)
		}
	}
}

func TestAdmission(t *testing.T) {
	loop := &net.TCPAddr{IP: net.ParseIP("127.0.0.2"), Port: 5000}
	loop6 := &net.TCPAddr{IP: net.ParseIP("::1"), Port: 5000}
	mapped := &net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 5000}
	remote := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 5000}
	remote6 := &net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 5000}
	users := StaticUsers{"streamdb": rfcVerifier(t, "pencil")}
	type want struct {
		scram bool
		code  string
	}
	for _, tc := range []struct {
		name string
		sec  Security
		addr net.Addr
		tls  bool
		want want
	}{
		{"no password, loopback: trusted", Security{}, loop, false, want{false, ""}},
		{"no password, ::1: trusted", Security{}, loop6, false, want{false, ""}},
		{"no password, mapped loopback: trusted", Security{}, mapped, false, want{false, ""}},
		{"no password, unix socket: trusted", Security{}, &net.UnixAddr{Name: "/tmp/.s.PGSQL.5433", Net: "unix"}, false, want{false, ""}},
		{"no password, remote: refused", Security{}, remote, false, want{false, "28000"}},
		{"no password, remote over TLS: refused", Security{}, remote6, true, want{false, "28000"}},
		{"password, loopback: SCRAM", Security{Auth: users}, loop, false, want{true, ""}},
		{"password, remote: SCRAM", Security{Auth: users}, remote, false, want{true, ""}},
		{"require TLS, remote plain: refused", Security{Auth: users, RequireTLSRemote: true}, remote, false, want{false, "28000"}},
		{"require TLS, remote TLS: SCRAM", Security{Auth: users, RequireTLSRemote: true}, remote, true, want{true, ""}},
		{"require TLS, loopback plain: SCRAM", Security{Auth: users, RequireTLSRemote: true}, loop, false, want{true, ""}},
		{"require TLS, no password, loopback plain: trusted", Security{RequireTLSRemote: true}, loop, false, want{false, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scram, refusal := tc.sec.Admission(tc.addr, tc.tls)
			code := ""
			if refusal != nil {
				code = refusal.Code
				if !strings.Contains(refusal.Message, "192.0.2.7") && !strings.Contains(refusal.Message, "2001:db8::1") {
					t.Errorf("message does not name the host: %s", refusal.Message)
				}
			}
			if scram != tc.want.scram || code != tc.want.code {
				t.Fatalf("admission = %v, %q; want %v, %q", scram, code, tc.want.scram, tc.want.code)
			}
		})
	}
}
