package types

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// pgShortest returns the shortest digits of f (in 'e' form) as
// PostgreSQL's float4out and float8out print them, for bits 32 or 64. Its
// Ryu excludes the bounds of the rounding interval, where Go's shortest
// formatting takes a bound when f's mantissa is even: a number exactly
// halfway between f and its neighbour reads back as f under ties-to-even,
// yet PostgreSQL prints more digits instead. shortest is Go's shortest
// form of f.
func pgShortest(f float64, bits int, shortest string) string {
	if f == 0 || math.IsInf(f, 0) || math.IsNaN(f) || !isMidpoint(shortest, f, bits) {
		return shortest
	}
	for prec := len(digitsOf(shortest)); prec <= 17; prec++ {
		s := strconv.FormatFloat(f, 'e', prec, bits)
		if v, err := strconv.ParseFloat(s, bits); err == nil && v == f && !isMidpoint(s, f, bits) {
			return s
		}
	}
	return shortest
}

// digitsOf returns the mantissa digits of an 'e' formatted number.
func digitsOf(e string) string {
	var d []byte
	for i := 0; i < len(e) && e[i] != 'e'; i++ {
		if e[i] >= '0' && e[i] <= '9' {
			d = append(d, e[i])
		}
	}
	return string(d)
}

// isMidpoint reports whether the decimal s ('e' form) lies exactly
// halfway between f and a neighbouring float of its width.
func isMidpoint(s string, f float64, bits int) bool {
	// A midpoint is an odd multiple of a power of two: with a fraction,
	// its last decimal digit is 5; without, it is an integer too large
	// for every integer to be a float (2^24, 2^53). Others are cheaply
	// ruled out.
	d := digitsOf(s)
	exp, _ := strconv.Atoi(s[strings.IndexByte(s, 'e')+1:])
	if d[len(d)-1] != '5' && !(exp-(len(d)-1) >= 0 && exp >= map[int]int{32: 7, 64: 15}[bits]) {
		return false
	}
	x, ok := new(big.Rat).SetString(s)
	if !ok {
		return false
	}
	var next []float64
	if bits == 32 {
		f32 := float32(f)
		next = []float64{float64(math.Nextafter32(f32, float32(math.Inf(1)))), float64(math.Nextafter32(f32, float32(math.Inf(-1))))}
	} else {
		next = []float64{math.Nextafter(f, math.Inf(1)), math.Nextafter(f, math.Inf(-1))}
	}
	fr := new(big.Rat).SetFloat64(f)
	for _, n := range next {
		if math.IsInf(n, 0) {
			continue
		}
		mid := new(big.Rat).Add(fr, new(big.Rat).SetFloat64(n))
		mid.Quo(mid, big.NewRat(2, 1))
		if x.Cmp(mid) == 0 {
			return true
		}
	}
	return false
}
