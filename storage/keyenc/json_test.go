package keyenc

import (
	"bufio"
	"bytes"
	"math/rand"
	"os"
	"strings"
	"testing"

	"streamdb/types"
)

// readJSONBOrder reads testdata/jsonb_order.txt: jsonb values in the order
// PostgreSQL 15 sorts them.
func readJSONBOrder(t *testing.T) []types.Datum {
	t.Helper()
	f, err := os.Open("testdata/jsonb_order.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []types.Datum
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		d, err := types.ParseJSONB(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out = append(out, d)
	}
	return out
}

// TestJSONBKeysInPostgresOrder checks that the keys of jsonb values, and
// types.Compare, put PostgreSQL's sorted values in its order, that equal
// values are equal keys, and that every key decodes to an equal value.
func TestJSONBKeysInPostgresOrder(t *testing.T) {
	vals := readJSONBOrder(t)
	for i, d := range vals {
		k := Append(nil, d)
		got, rest, err := Decode(k)
		if err != nil || len(rest) != 0 {
			t.Fatalf("%s: decode: %v (rest %x)", d.S, err, rest)
		}
		if types.Compare(got, d) != 0 || !bytes.Equal(Append(nil, got), k) {
			t.Fatalf("%s decodes as %s", d.S, got.S)
		}
		v, _, err := Decode(AppendValue(nil, d))
		if err != nil || v.S != d.S || v.K != types.KindJSONB {
			t.Fatalf("%s: stored value reads back as %q (%v)", d.S, v.S, err)
		}
		if i == 0 {
			continue
		}
		prev := vals[i-1]
		c := types.Compare(prev, d)
		if c > 0 {
			t.Errorf("types.Compare puts %s after %s; PostgreSQL before", prev.S, d.S)
		}
		kc := bytes.Compare(Append(nil, prev), k)
		if kc != c {
			t.Errorf("keys of %s and %s compare %d, values %d", prev.S, d.S, kc, c)
		}
	}
}

// TestJSONBKeyOrderRandom draws pairs of the values and checks that their
// keys compare as the values do, in composite keys too.
func TestJSONBKeyOrderRandom(t *testing.T) {
	const seed = 40
	vals := readJSONBOrder(t)
	rng := rand.New(rand.NewSource(seed))
	for n := 0; n < 20000; n++ {
		i, j := rng.Intn(len(vals)), rng.Intn(len(vals))
		a, b := vals[i], vals[j]
		want := types.Compare(a, b)
		if (i < j && want > 0) || (i > j && want < 0) {
			t.Fatalf("seed %d: %s and %s compare %d against PostgreSQL's order", seed, a.S, b.S, want)
		}
		ka := Append(Append(nil, a), types.NewInt(1))
		kb := Append(Append(nil, b), types.NewInt(0))
		got := bytes.Compare(ka, kb)
		if want == 0 {
			want = 1 // the second column decides
		}
		if got != want {
			t.Fatalf("seed %d: composite keys of %s and %s compare %d, want %d", seed, a.S, b.S, got, want)
		}
	}
}

// FuzzJSONBKey checks, for JSON text the fuzzer makes, that the key
// decodes to an equal value and orders the value against a fixed set as
// types.Compare does.
func FuzzJSONBKey(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `1`, `"a"`, `{"a": [1, 2.50]}`, `[null, true, false]`, `{"aa": 1, "b": {"c": []}}`} {
		f.Add(s)
	}
	others := []string{`[]`, `null`, `""`, `0`, `1.0`, `true`, `[1]`, `[[]]`, `{}`, `{"a": 1}`, `{"a": [1, {"b": null}]}`}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := types.ParseJSONB(s)
		if err != nil {
			return
		}
		k := Append(nil, d)
		got, rest, err := Decode(k)
		if err != nil || len(rest) != 0 || types.Compare(got, d) != 0 {
			t.Fatalf("%s: key decodes as %s, %v", d.S, got.S, err)
		}
		for _, o := range others {
			od, _ := types.ParseJSONB(o)
			if c, kc := types.Compare(d, od), bytes.Compare(k, Append(nil, od)); c != kc {
				t.Fatalf("%s vs %s: values compare %d, keys %d", d.S, o, c, kc)
			}
		}
	})
}
