package types

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// TestJSONBCanonMatchesParser checks the one-pass canonicalizer against
// the parser over random documents: where it answers, its text is the
// parser's; where the parser refuses input, it gives up.
func TestJSONBCanonMatchesParser(t *testing.T) {
	seed := int64(20261206)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	var c JSONBCanon
	fixed := []string{
		`{}`, `[]`, ` { } `, `-0`, `-0.0`, `0`, `1e308`, `-1e308`, `1E+2`, `1.50`, `0.000001e-3`,
		`12345678901234567890123456789`, `{"a":1,"a":2}`, `{"b":1,"a":2,"aa":3,"a":{"x":[1,2]}}`,
		`{"é":"ü","日本":"語","a":"\u00e9"}`, `"tab\tin"`, `"x\\y"`, `{"k\"":1}`, `[1,2,]`,
		`{"a":1,}`, `{"a" 1}`, `nul`, `truex`, `01`, `1.`, `.5`, `-`, `1e`, `[1 2]`, `{"a":1}x`,
		"\"ctl\x01\"", `[[[[]]]]`, `{"a":{"b":{"c":{}}}}`, `1e1000000`, `-1e-1000000`,
		strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1),
		strings.Repeat("9", 1500), `{"":1,"":2}`, `[true,false,null]`, "\r\n{\t\"a\" :\n1 }\r",
	}
	check := func(s string) {
		t.Helper()
		want, werr := ParseJSONBSlow(s)
		got, ok := c.Canonical(s)
		if gotB, okB := c.CanonicalBytes([]byte(s)); gotB != got || okB != ok {
			t.Fatalf("seed %d: %q: CanonicalBytes %q, %v; Canonical %q, %v", seed, s, gotB, okB, got, ok)
		}
		if !ok {
			return
		}
		if werr != nil {
			t.Fatalf("seed %d: %q: canonicalizer gave %q, parser refused: %v", seed, s, got, werr)
		}
		if got != want.S {
			t.Fatalf("seed %d: %q: canonicalizer %q, parser %q", seed, s, got, want.S)
		}
		fast, err := ParseJSONB(s)
		if err != nil || fast.S != want.S || fast.K != KindJSONB {
			t.Fatalf("seed %d: %q: ParseJSONB %q, %v; parser %q", seed, s, fast.S, err, want.S)
		}
	}
	for _, s := range fixed {
		check(s)
	}
	answered := 0
	for i := 0; i < 20000; i++ {
		var sb strings.Builder
		genJSON(rng, &sb, 0)
		s := sb.String()
		if rng.Intn(20) == 0 && len(s) > 1 { // corrupt one byte
			b := []byte(s)
			const junk = "{}[],:\"\\ 0-ex"
			b[rng.Intn(len(b))] = junk[rng.Intn(len(junk))]
			s = string(b)
		}
		if _, ok := c.Canonical(s); ok {
			answered++
		}
		check(s)
	}
	if answered < 10000 {
		t.Fatalf("seed %d: the canonicalizer answered only %d of 20000 documents", seed, answered)
	}
}

func genJSON(rng *rand.Rand, sb *strings.Builder, depth int) {
	ws := func() {
		if rng.Intn(4) == 0 {
			sb.WriteString([]string{" ", "\t", "\n", "\r", "  "}[rng.Intn(5)])
		}
	}
	k := rng.Intn(10)
	if depth > 4 {
		k = rng.Intn(6)
	}
	switch k {
	case 0:
		sb.WriteString([]string{"true", "false", "null"}[rng.Intn(3)])
	case 1, 2:
		sb.WriteString(genNumber(rng))
	case 3, 4, 5:
		sb.WriteString(genString(rng))
	case 6, 7:
		sb.WriteByte('[')
		n := rng.Intn(4)
		for i := 0; i < n; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			ws()
			genJSON(rng, sb, depth+1)
			ws()
		}
		sb.WriteByte(']')
	default:
		sb.WriteByte('{')
		n := rng.Intn(6)
		for i := 0; i < n; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			ws()
			sb.WriteString([]string{`"a"`, `"b"`, `"aa"`, `"ab"`, `"user"`, `"id"`, `"é"`, `""`, `"Z"`, `"k\u0041"`, `"zz"`, `"日"`}[rng.Intn(12)])
			ws()
			sb.WriteByte(':')
			ws()
			genJSON(rng, sb, depth+1)
		}
		ws()
		sb.WriteByte('}')
	}
}

func genNumber(rng *rand.Rand) string {
	switch rng.Intn(8) {
	case 0:
		return []string{"0", "-0", "-0.0", "0.0", "1e308", "-1e308", "1e-308", "9223372036854775808", "-9223372036854775809", "1E+2", "2.50", "1e0"}[rng.Intn(12)]
	case 1:
		return strconv.FormatFloat(rng.NormFloat64()*1e6, 'g', -1, 64)
	case 2:
		return strconv.FormatFloat(rng.NormFloat64(), 'e', rng.Intn(10), 64)
	case 3:
		return strings.Repeat("9", 1+rng.Intn(40))
	default:
		return strconv.FormatInt(rng.Int63n(2000000)-1000000, 10)
	}
}

func genString(rng *rand.Rand) string {
	parts := []string{"a", "b", "é", "日本", "😀", " ", "x", `\"`, `\\`, `\n`, `\u00e9`, `\ud83d\ude00`, `\/`, `\t`, "z"}
	var sb strings.Builder
	sb.WriteByte('"')
	n := rng.Intn(6)
	escapes := rng.Intn(3) == 0
	for i := 0; i < n; i++ {
		p := parts[rng.Intn(len(parts))]
		if !escapes && strings.HasPrefix(p, `\`) {
			continue
		}
		sb.WriteString(p)
	}
	sb.WriteByte('"')
	return sb.String()
}
