package exec

import (
	"encoding/base64"
	"strconv"
	"testing"
)

func TestDebeziumDecimal(t *testing.T) {
	for _, c := range []struct {
		bytes []byte
		scale int
		want  string
	}{
		{[]byte{0x00}, 2, "0.00"},
		{[]byte{0x01}, 3, "0.001"},
		{[]byte{0xff}, 2, "-0.01"},
		{[]byte{0x30, 0x39}, 2, "123.45"},
		{[]byte{0xcf, 0xc7}, 2, "-123.45"},
		{[]byte{0x00, 0x80}, 0, "128"},
		{[]byte{0x80}, 1, "-12.8"},
		{[]byte{0x7b}, -2, "12300"},
		{[]byte{0x00, 0xde, 0x0b, 0x6b, 0x3a, 0x76, 0x40, 0x00, 0x00}, 18, "16.000000000000000000"},
	} {
		raw := strconv.Quote(base64.StdEncoding.EncodeToString(c.bytes))
		got, err := decimalOfBase64([]byte(raw), c.scale)
		if err != nil || string(got) != c.want {
			t.Errorf("decimalOfBase64(%x, %d) = %s, %v; want %s", c.bytes, c.scale, got, err, c.want)
		}
	}
	if _, err := decimalOfBase64([]byte(`"not base64!"`), 2); err == nil {
		t.Error("decimalOfBase64 of text that is not base64 succeeded")
	}
	got, err := variableScaleDecimal([]byte(`{"scale": 4, "value": "` + base64.StdEncoding.EncodeToString([]byte{0xfe, 0x0c}) + `"}`))
	if err != nil || string(got) != "-0.0500" {
		t.Errorf("variableScaleDecimal = %s, %v; want -0.0500", got, err)
	}
}

func TestDebeziumRowConversions(t *testing.T) {
	d := &envelopeDecoder{}
	schema := []byte(`{"type": "struct", "fields": [
		{"type": "struct", "field": "before"},
		{"type": "struct", "field": "after", "fields": [
			{"type": "int32", "field": "id"},
			{"type": "int32", "name": "io.debezium.time.Date", "field": "d"},
			{"type": "int64", "name": "io.debezium.time.MicroTimestamp", "field": "ts"},
			{"type": "int64", "name": "io.debezium.time.Timestamp", "field": "ms"},
			{"type": "int64", "name": "io.debezium.time.MicroTime", "field": "t"},
			{"type": "string", "name": "io.debezium.data.Json", "field": "j"},
			{"type": "bytes", "field": "b"}]}]}`)
	conv, err := d.debeziumConversions(schema)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := d.debeziumConversions(schema); len(again) != len(conv) {
		t.Fatal("the cached conversions differ")
	}
	row, err := debeziumRow([]byte(`{"id": 1, "d": -1, "ts": 1500000, "ms": -1, "t": 3723000001, "j": "{\"a\": [1]}", "b": "AP8="}`), conv)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":"\\x00ff","d":"1969-12-31","id":1,"j":{"a": [1]},"ms":"1969-12-31 23:59:59.999","t":"01:02:03.000001","ts":"1970-01-01 00:00:01.5"}`
	if string(row) != want {
		t.Errorf("converted row\n got %s\nwant %s", row, want)
	}
}
