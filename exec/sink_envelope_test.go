package exec

import (
	"strings"
	"testing"

	"streamdb/types"
)

func TestEncodeSinkEpoch(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "v", Type: types.Text}}
	row := func(k int64, v string) types.Row { return types.Row{types.NewInt(k), types.NewString(v)} }
	changes := []Change{
		{Row: row(1, "a"), Sign: Delete}, {Row: row(1, "b"), Sign: Insert}, // update of key 1
		{Row: row(2, "x"), Sign: Insert},                                   // new key 2
		{Row: row(3, "y"), Sign: Delete},                                   // key 3 deleted
		{Row: row(4, "t"), Sign: Insert}, {Row: row(4, "t"), Sign: Delete}, // key 4 came and went
	}
	cases := []struct {
		env  SinkEnvelope
		keys []int
		want []string
	}{
		{EnvelopeChangelog, []int{0}, []string{
			`[{"op":"-","row":{"k":1,"v":"a"}},{"op":"-","row":{"k":3,"v":"y"}},{"op":"-","row":{"k":4,"v":"t"}},` +
				`{"op":"+","row":{"k":1,"v":"b"}},{"op":"+","row":{"k":2,"v":"x"}},{"op":"+","row":{"k":4,"v":"t"}}]`}},
		{EnvelopeUpsert, []int{0}, []string{
			`{"key":{"k":1},"value":{"k":1,"v":"b"}}`,
			`{"key":{"k":2},"value":{"k":2,"v":"x"}}`,
			`{"key":{"k":3},"value":null}`}},
		{EnvelopeDebezium, []int{0}, []string{
			`{"before":{"k":1,"v":"a"},"after":{"k":1,"v":"b"},"op":"u"}`,
			`{"before":null,"after":{"k":2,"v":"x"},"op":"c"}`,
			`{"before":{"k":3,"v":"y"},"after":null,"op":"d"}`}},
		{EnvelopeDebezium, nil, []string{
			`{"before":{"k":1,"v":"a"},"after":null,"op":"d"}`,
			`{"before":{"k":3,"v":"y"},"after":null,"op":"d"}`,
			`{"before":{"k":4,"v":"t"},"after":null,"op":"d"}`,
			`{"before":null,"after":{"k":1,"v":"b"},"op":"c"}`,
			`{"before":null,"after":{"k":2,"v":"x"},"op":"c"}`,
			`{"before":null,"after":{"k":4,"v":"t"},"op":"c"}`}},
	}
	for _, c := range cases {
		msgs, err := EncodeSinkEpoch(c.env, cols, c.keys, changes)
		if err != nil {
			t.Fatalf("%s: %v", c.env, err)
		}
		got := make([]string, len(msgs))
		for i, m := range msgs {
			got[i] = string(m)
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s keys=%v:\ngot  %s\nwant %s", c.env, c.keys, strings.Join(got, "\n     "), strings.Join(c.want, "\n     "))
		}
	}
	if _, err := EncodeSinkEpoch(EnvelopeUpsert, cols, nil, changes); err == nil {
		t.Error("upsert without a unique key: no error")
	}
	if msgs, err := EncodeSinkEpoch(EnvelopeChangelog, cols, nil, nil); err != nil || msgs != nil {
		t.Errorf("empty epoch: %v %v", msgs, err)
	}
}
