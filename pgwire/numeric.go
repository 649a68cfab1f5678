package pgwire

import (
	"encoding/binary"
	"math"

	"github.com/cockroachdb/apd/v3"

	"streamdb/sqlerr"
)

// Binary numeric sign words.
const (
	numericPos    = 0x0000
	numericNeg    = 0x4000
	numericNaN    = 0xC000
	numericPosInf = 0xD000
	numericNegInf = 0xF000
	infDscale     = 32
	// numericMaxDscale is PostgreSQL's NUMERIC_DSCALE_MAX.
	numericMaxDscale = 0x3FFF
)

// appendNumeric appends the binary wire form of d exactly as PostgreSQL's
// numeric_send writes it: base-10000 digits aligned on the decimal point,
// leading and trailing zero digits stripped, and the display scale taken
// from the decimal's exponent (so 1.50 keeps its two decimals).
func appendNumeric(dst []byte, d *apd.Decimal) ([]byte, error) {
	header := func(ndigits, weight, sign, dscale int) []byte {
		dst = binary.BigEndian.AppendUint16(dst, uint16(ndigits))
		dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
		dst = binary.BigEndian.AppendUint16(dst, uint16(sign))
		return binary.BigEndian.AppendUint16(dst, uint16(dscale))
	}
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return header(0, 0, numericNaN, 0), nil
	case apd.Infinite:
		// PostgreSQL 15's numeric_send reports a display scale of 32 for
		// the infinities (the bits its short header leaves there).
		if d.Negative {
			return header(0, 0, numericNegInf, infDscale), nil
		}
		return header(0, 0, numericPosInf, infDscale), nil
	}

	dscale := max(0, -int(d.Exponent))
	if dscale > numericMaxDscale {
		return dst, sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric scale %d is out of range", dscale)
	}
	coeff := d.Coeff.Append(nil, 10)
	if d.Coeff.Sign() == 0 {
		return header(0, 0, numericPos, dscale), nil
	}

	// Left-pad the decimal digits so that the integer part is a whole
	// number of base-10000 digits, then right-pad to a whole group.
	intDigits := len(coeff) + int(d.Exponent)
	padLeft := (4 - (intDigits%4+4)%4) % 4
	digits := make([]byte, 0, padLeft+len(coeff)+3)
	for range padLeft {
		digits = append(digits, '0')
	}
	digits = append(digits, coeff...)
	for len(digits)%4 != 0 {
		digits = append(digits, '0')
	}
	weight := (intDigits+padLeft)/4 - 1

	groups := make([]uint16, 0, len(digits)/4)
	for i := 0; i < len(digits); i += 4 {
		g := uint16(digits[i]-'0')*1000 + uint16(digits[i+1]-'0')*100 + uint16(digits[i+2]-'0')*10 + uint16(digits[i+3]-'0')
		groups = append(groups, g)
	}
	for len(groups) > 0 && groups[0] == 0 {
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	if len(groups) > math.MaxUint16 || weight > math.MaxInt16 || weight < math.MinInt16 {
		return dst, sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric value out of range for the binary format")
	}
	sign := numericPos
	if d.Negative {
		sign = numericNeg
	}
	dst = header(len(groups), weight, sign, dscale)
	for _, g := range groups {
		dst = binary.BigEndian.AppendUint16(dst, g)
	}
	return dst, nil
}

// decodeNumeric reads PostgreSQL's binary numeric form. The result has the
// value's display scale as its exponent, so that '0.00' stays '0.00'.
func decodeNumeric(b []byte) (*apd.Decimal, bool) {
	if len(b) < 8 {
		return nil, false
	}
	ndigits := int(binary.BigEndian.Uint16(b))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := int(binary.BigEndian.Uint16(b[4:]))
	dscale := int(binary.BigEndian.Uint16(b[6:]))
	if len(b) != 8+2*ndigits || dscale > numericMaxDscale {
		return nil, false
	}
	switch sign {
	case numericNaN:
		return &apd.Decimal{Form: apd.NaN}, true
	case numericPosInf:
		return &apd.Decimal{Form: apd.Infinite}, true
	case numericNegInf:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, true
	case numericPos, numericNeg:
	default:
		return nil, false
	}

	// The coefficient is the base-10000 digits written out in decimal; its
	// exponent follows from the weight of the last digit.
	digits := make([]byte, 0, 4*ndigits+1)
	for i := range ndigits {
		g := binary.BigEndian.Uint16(b[8+2*i:])
		if g >= 10000 {
			return nil, false
		}
		digits = append(digits, byte('0'+g/1000), byte('0'+g/100%10), byte('0'+g/10%10), byte('0'+g%10))
	}
	exp := 4 * (weight - ndigits + 1)
	// Rescale to the display scale: pad with zeros, or drop zeros beyond it
	// (non-zero digits beyond it are kept).
	for ; exp > -dscale; exp-- {
		digits = append(digits, '0')
	}
	for exp < -dscale && len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if len(digits) == 0 {
		digits = append(digits, '0')
	}
	var coeff apd.BigInt
	if _, ok := coeff.SetString(string(digits), 10); !ok {
		return nil, false
	}
	d := apd.NewWithBigInt(&coeff, int32(exp))
	d.Negative = sign == numericNeg && coeff.Sign() != 0
	return d, true
}
