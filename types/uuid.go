package types

import (
	"crypto/rand"
	"encoding/hex"

	"streamdb/sqlerr"
)

// A uuid datum (KindUUID) holds the uuid's 16 bytes in S, most significant
// first, so that comparing S bytewise is PostgreSQL's uuid order (uuid_cmp
// is memcmp) and the bytes are the binary wire format.

// UUIDLen is the size of a uuid in bytes.
const UUIDLen = 16

// NewUUID is a uuid value; b must hold exactly UUIDLen bytes.
func NewUUID(b string) Datum { return Datum{K: KindUUID, S: b} }

// RandomUUID is gen_random_uuid(): a version 4 (random) uuid from a
// cryptographically secure source, as PostgreSQL's pg_strong_random.
func RandomUUID() Datum {
	var b [UUIDLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on supported platforms
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant RFC 4122
	return NewUUID(string(b[:]))
}

// FormatUUID is uuid_out: 32 lower-case hex digits in groups of 8-4-4-4-12.
func FormatUUID(b string) string {
	var out [36]byte
	j := 0
	for i := 0; i < len(b) && i < UUIDLen; i++ {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		hex.Encode(out[j:j+2], []byte{b[i]})
		j += 2
	}
	return string(out[:j])
}

// ParseUUID is uuid_in: 32 hex digits in either case, optionally inside
// one pair of braces, with a hyphen allowed after any group of four digits
// but the last (so a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,
// {a0eebc999c0b4ef8bb6d6bb9bd380a11} and a0ee-bc99-9c0b-4ef8-bb6d-6bb9-
// bd38-0a11 are one value). Nothing else is allowed, whitespace included.
func ParseUUID(s string) (Datum, error) {
	var b [UUIDLen]byte
	src := s
	braces := len(src) > 0 && src[0] == '{'
	if braces {
		src = src[1:]
	}
	for i := 0; i < UUIDLen; i++ {
		if len(src) < 2 {
			return Null, uuidSyntax(s)
		}
		hi, ok1 := hexDigit(src[0])
		lo, ok2 := hexDigit(src[1])
		if !ok1 || !ok2 {
			return Null, uuidSyntax(s)
		}
		b[i] = hi<<4 | lo
		src = src[2:]
		if len(src) > 0 && src[0] == '-' && i%2 == 1 && i < UUIDLen-1 {
			src = src[1:]
		}
	}
	if braces {
		if len(src) == 0 || src[0] != '}' {
			return Null, uuidSyntax(s)
		}
		src = src[1:]
	}
	if len(src) != 0 {
		return Null, uuidSyntax(s)
	}
	return NewUUID(string(b[:])), nil
}

func uuidSyntax(s string) error {
	return sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type uuid: \"%s\"", s).
		WithHint("A uuid is 32 hexadecimal digits, as in a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11.")
}
