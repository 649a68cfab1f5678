package pgwire

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"streamdb/sqlerr"
)

// SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL 15 runs it over the
// AuthenticationSASL messages. The server side only: the client is any
// PostgreSQL driver.

const (
	scramSHA256     = "SCRAM-SHA-256"
	scramSHA256Plus = "SCRAM-SHA-256-PLUS"
	// cbindTLSServerEndPoint is the only channel binding type offered, as in
	// PostgreSQL (RFC 5929).
	cbindTLSServerEndPoint = "tls-server-end-point"

	// SCRAMIterations is PostgreSQL's default scram_iterations.
	SCRAMIterations = 4096
	// scramSaltLen and scramNonceLen are PostgreSQL's SCRAM_DEFAULT_SALT_LEN
	// and SCRAM_RAW_NONCE_LEN.
	scramSaltLen  = 16
	scramNonceLen = 18
	// maxSCRAMIterations bounds what a stored verifier may ask for: the
	// server computes nothing from it, but a parsed verifier is checked.
	maxSCRAMIterations = 1 << 24
)

// SCRAMVerifier is what the server keeps of a password: the salt, the
// iteration count and the two keys derived from the salted password. The
// password itself cannot be recovered from it.
type SCRAMVerifier struct {
	Iterations int
	Salt       []byte
	StoredKey  [sha256.Size]byte
	ServerKey  [sha256.Size]byte
}

// NewSCRAMVerifier derives a verifier from password with a fresh random
// salt and PostgreSQL's default iteration count.
func NewSCRAMVerifier(password string) (*SCRAMVerifier, error) {
	salt := make([]byte, scramSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	return DeriveSCRAMVerifier(password, salt, SCRAMIterations)
}

// DeriveSCRAMVerifier derives the verifier of password for a given salt
// and iteration count. The password is normalized with SASLprep first, as
// PostgreSQL does (pg_saslprep).
func DeriveSCRAMVerifier(password string, salt []byte, iterations int) (*SCRAMVerifier, error) {
	if iterations < 1 || iterations > maxSCRAMIterations {
		return nil, fmt.Errorf("SCRAM iteration count %d is out of range", iterations)
	}
	salted, err := pbkdf2.Key(sha256.New, saslPrep(password), salt, iterations, sha256.Size)
	if err != nil {
		return nil, err
	}
	v := &SCRAMVerifier{Iterations: iterations, Salt: bytes.Clone(salt)}
	clientKey := hmacSHA256(salted, "Client Key")
	v.StoredKey = sha256.Sum256(clientKey)
	copy(v.ServerKey[:], hmacSHA256(salted, "Server Key"))
	clear(salted)
	clear(clientKey)
	return v, nil
}

// String is the verifier in PostgreSQL's pg_authid.rolpassword format:
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>, base64.
func (v *SCRAMVerifier) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", v.Iterations, b64(v.Salt), b64(v.StoredKey[:]), b64(v.ServerKey[:]))
}

// ParseSCRAMVerifier reads a verifier in PostgreSQL's format (what String
// writes, and what psql's \password sends in ALTER USER ... PASSWORD).
func ParseSCRAMVerifier(s string) (*SCRAMVerifier, error) {
	bad := errors.New("not a SCRAM-SHA-256 verifier")
	rest, ok := strings.CutPrefix(s, "SCRAM-SHA-256$")
	if !ok {
		return nil, bad
	}
	iterSalt, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return nil, bad
	}
	iterText, saltText, ok1 := strings.Cut(iterSalt, ":")
	storedText, serverText, ok2 := strings.Cut(keys, ":")
	if !ok1 || !ok2 {
		return nil, bad
	}
	iter, err := strconv.Atoi(iterText)
	if err != nil || iter < 1 || iter > maxSCRAMIterations {
		return nil, bad
	}
	salt, err1 := base64.StdEncoding.DecodeString(saltText)
	stored, err2 := base64.StdEncoding.DecodeString(storedText)
	server, err3 := base64.StdEncoding.DecodeString(serverText)
	if err1 != nil || err2 != nil || err3 != nil || len(salt) == 0 || len(stored) != sha256.Size || len(server) != sha256.Size {
		return nil, bad
	}
	v := &SCRAMVerifier{Iterations: iter, Salt: salt}
	copy(v.StoredKey[:], stored)
	copy(v.ServerKey[:], server)
	return v, nil
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// saslPrep normalizes a password as PostgreSQL's pg_saslprep does (RFC
// 4013): pure ASCII is used as is; otherwise non-ASCII spaces map to a
// space, characters "commonly mapped to nothing" are removed and the result
// is NFKC-normalized. A password that SASLprep prohibits is used unchanged,
// as PostgreSQL does. (The bidirectional-text checks are not made; they
// only decide whether such passwords are used raw.)
func saslPrep(password string) string {
	ascii := true
	for i := 0; i < len(password); i++ {
		if password[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii || !utf8.ValidString(password) {
		return password
	}
	var b strings.Builder
	for _, r := range password {
		switch {
		case unicode.Is(unicode.Zs, r) && r != ' ':
			b.WriteRune(' ') // RFC 3454 C.1.2
		case mappedToNothing(r):
		default:
			b.WriteRune(r)
		}
	}
	out := norm.NFKC.String(b.String())
	for _, r := range out {
		if r >= utf8.RuneSelf && (unicode.IsControl(r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cs, r) ||
			(r >= 0xFDD0 && r <= 0xFDEF) || r&0xFFFE == 0xFFFE || (r >= 0x2FF0 && r <= 0x2FFB) ||
			(r >= 0x200E && r <= 0x200F) || (r >= 0x202A && r <= 0x202E) || (r >= 0x206A && r <= 0x206F) ||
			r == 0xFFF9 || r == 0xFFFA || r == 0xFFFB || r == 0xFFFC || r == 0xFFFD || r == 0x0340 || r == 0x0341 ||
			(r >= 0xE0001 && r <= 0xE007F)) {
			return password
		}
		if r < 0x20 || r == 0x7F {
			return password
		}
	}
	return out
}

// mappedToNothing is RFC 3454 table B.1.
func mappedToNothing(r rune) bool {
	switch r {
	case 0x00AD, 0x034F, 0x1806, 0x180B, 0x180C, 0x180D, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF:
		return true
	}
	return r >= 0xFE00 && r <= 0xFE0F
}

// errPasswordFailed is the outcome of a SCRAM exchange whose proof was
// wrong, or whose user does not exist: the caller reports it as 28P01
// naming the user.
var errPasswordFailed = errors.New("password authentication failed")

// scramExchange is the server side of one SCRAM-SHA-256 exchange.
type scramExchange struct {
	// v is the user's verifier; for an unknown user it is a mock one (so
	// the exchange looks the same) and mock is set: the exchange then
	// always fails at the proof.
	v    *SCRAMVerifier
	mock bool
	// cbData is the tls-server-end-point channel binding data of the
	// connection; nil without TLS (or with a certificate it is undefined
	// for). SCRAM-SHA-256-PLUS is offered exactly when it is set.
	cbData []byte
	// serverNonce is the server's part of the nonce; random unless a test
	// sets it.
	serverNonce string

	plus            bool   // the client chose SCRAM-SHA-256-PLUS
	gs2Header       string // "n,,", "y,," or "p=tls-server-end-point,,"
	clientFirstBare string
	serverFirst     string
	nonce           string // client nonce + server nonce
}

// mechanisms lists the SASL mechanisms offered, the strongest first.
func (x *scramExchange) mechanisms() []string {
	if x.cbData != nil {
		return []string{scramSHA256Plus, scramSHA256}
	}
	return []string{scramSHA256}
}

func malformedSCRAM(detail string, args ...any) *sqlerr.Error {
	return &sqlerr.Error{Code: sqlerr.ProtocolViolation, Message: "malformed SCRAM message", Detail: fmt.Sprintf(detail, args...)}
}

// readAttr reads "<attr>=<value>" up to the next ',' (or the end) from s.
func readAttr(s *string, attr byte) (string, *sqlerr.Error) {
	in := *s
	if len(in) < 2 || in[0] != attr || in[1] != '=' {
		if in == "" {
			return "", malformedSCRAM("Attribute %q expected, but found end of string.", string(attr))
		}
		return "", malformedSCRAM("Attribute %q expected, but found %q.", string(attr), in[:1])
	}
	in = in[2:]
	value, rest, found := strings.Cut(in, ",")
	if found {
		*s = rest
	} else {
		*s = ""
	}
	return value, nil
}

// clientFirst reads the SASLInitialResponse (mechanism and
// client-first-message) and returns the server-first-message.
func (x *scramExchange) clientFirst(mechanism string, data []byte) ([]byte, *sqlerr.Error) {
	switch {
	case mechanism == scramSHA256Plus && x.cbData != nil:
		x.plus = true
	case mechanism == scramSHA256:
	default:
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "client selected an invalid SASL authentication mechanism")
	}
	in := string(data)
	if !utf8.ValidString(in) {
		return nil, malformedSCRAM("The message is not valid UTF-8.")
	}
	if in == "" {
		return nil, malformedSCRAM("The message is empty.")
	}
	// gs2-cbind-flag
	switch in[0] {
	case 'n', 'y':
		if x.plus {
			return nil, malformedSCRAM("The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data.")
		}
		if in[0] == 'y' && x.cbData != nil {
			// The client can bind but believes the server cannot: a
			// man in the middle removed SCRAM-SHA-256-PLUS from the offer.
			return nil, &sqlerr.Error{Code: sqlerr.InvalidAuthorizationSpecification, Message: "SCRAM channel binding negotiation error",
				Detail: "The client supports SCRAM channel binding but thinks the server does not.  However, this server does support channel binding."}
		}
		if len(in) < 2 || in[1] != ',' {
			return nil, malformedSCRAM("Comma expected after the channel-binding flag.")
		}
		x.gs2Header = in[:2]
		in = in[2:]
	case 'p':
		if !x.plus {
			return nil, malformedSCRAM("The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data.")
		}
		cbType, err := readAttr(&in, 'p')
		if err != nil {
			return nil, err
		}
		if cbType != cbindTLSServerEndPoint {
			return nil, sqlerr.New(sqlerr.ProtocolViolation, "unsupported SCRAM channel-binding type %q", cbType)
		}
		x.gs2Header = "p=" + cbType + ","
	default:
		return nil, malformedSCRAM("Unexpected channel-binding flag %q.", in[:1])
	}
	// authzid: not supported, as in PostgreSQL.
	if strings.HasPrefix(in, "a") {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "client uses authorization identity, but it is not supported")
	}
	if !strings.HasPrefix(in, ",") {
		return nil, malformedSCRAM("Unexpected attribute in client-first-message.")
	}
	x.gs2Header += ","
	in = in[1:]
	x.clientFirstBare = in
	if strings.HasPrefix(in, "m") {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "client requires an unsupported SCRAM extension")
	}
	// The user name in the message is ignored: the startup packet's counts.
	if _, err := readAttr(&in, 'n'); err != nil {
		return nil, err
	}
	clientNonce, err := readAttr(&in, 'r')
	if err != nil {
		return nil, err
	}
	if clientNonce == "" {
		return nil, malformedSCRAM("The client nonce is empty.")
	}
	for i := 0; i < len(clientNonce); i++ {
		if c := clientNonce[i]; c < 0x21 || c > 0x7E {
			return nil, malformedSCRAM("The client nonce contains an invalid character.")
		}
	}
	if x.serverNonce == "" {
		raw := make([]byte, scramNonceLen)
		if _, err := rand.Read(raw); err != nil {
			return nil, sqlerr.New(sqlerr.InternalError, "could not generate random nonce")
		}
		x.serverNonce = base64.StdEncoding.EncodeToString(raw)
	}
	x.nonce = clientNonce + x.serverNonce
	x.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", x.nonce, base64.StdEncoding.EncodeToString(x.v.Salt), x.v.Iterations)
	return []byte(x.serverFirst), nil
}

// clientFinal reads the client-final-message and returns the
// server-final-message, or errPasswordFailed (as a plain error) when the
// proof is wrong or the user unknown, or an *sqlerr.Error for a malformed
// exchange.
func (x *scramExchange) clientFinal(data []byte) ([]byte, error) {
	in := string(data)
	cb, err := readAttr(&in, 'c')
	if err != nil {
		return nil, err
	}
	gotCB, decErr := base64.StdEncoding.DecodeString(cb)
	if decErr != nil {
		return nil, malformedSCRAM("Malformed channel binding data in client-final-message.")
	}
	if x.plus {
		want := append([]byte(x.gs2Header), x.cbData...)
		if subtle.ConstantTimeCompare(gotCB, want) != 1 {
			return nil, sqlerr.New(sqlerr.ProtocolViolation, "SCRAM channel binding check failed")
		}
	} else if string(gotCB) != x.gs2Header {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "unexpected SCRAM channel-binding attribute in client-final-message")
	}
	nonce, err := readAttr(&in, 'r')
	if err != nil {
		return nil, err
	}
	if nonce != x.nonce {
		return nil, &sqlerr.Error{Code: sqlerr.ProtocolViolation, Message: "invalid SCRAM response", Detail: "Nonce does not match."}
	}
	// Extensions before the proof are skipped, as in PostgreSQL.
	for in != "" && !strings.HasPrefix(in, "p=") {
		if len(in) < 2 || in[1] != '=' {
			return nil, malformedSCRAM("Attribute expected in client-final-message.")
		}
		if _, rest, found := strings.Cut(in, ","); found {
			in = rest
		} else {
			in = ""
		}
	}
	withoutProof := string(data[:len(data)-len(in)])
	withoutProof = strings.TrimSuffix(withoutProof, ",")
	proofText, err := readAttr(&in, 'p')
	if err != nil {
		return nil, err
	}
	if in != "" {
		return nil, malformedSCRAM("Garbage found at the end of client-final-message.")
	}
	proof, decErr := base64.StdEncoding.DecodeString(proofText)
	if decErr != nil || len(proof) != sha256.Size {
		return nil, malformedSCRAM("Malformed proof in client-final-message.")
	}

	authMessage := x.clientFirstBare + "," + x.serverFirst + "," + withoutProof
	clientSignature := hmacSHA256(x.v.StoredKey[:], authMessage)
	clientKey := make([]byte, sha256.Size)
	subtle.XORBytes(clientKey, proof, clientSignature)
	got := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(got[:], x.v.StoredKey[:]) != 1 || x.mock {
		return nil, errPasswordFailed
	}
	serverSignature := hmacSHA256(x.v.ServerKey[:], authMessage)
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSignature)), nil
}

// mockVerifier is the verifier used for a user that does not exist: its
// salt is derived from the name and a per-server secret, so repeated
// attempts see a stable salt and cannot tell the user is missing (as
// PostgreSQL's scram_mock_salt).
func mockVerifier(secret []byte, user string) *SCRAMVerifier {
	h := sha256.New()
	h.Write(secret)
	h.Write([]byte(user))
	sum := h.Sum(nil)
	v := &SCRAMVerifier{Iterations: SCRAMIterations, Salt: sum[:scramSaltLen]}
	copy(v.StoredKey[:], hmacSHA256(secret, "stored "+user))
	copy(v.ServerKey[:], hmacSHA256(secret, "server "+user))
	return v
}
