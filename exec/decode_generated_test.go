package exec

import (
	"testing"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// BenchmarkDecodeGenerated decodes bench/'s generated-columns event:
// user_id and amount as flat members, and as columns generated from a
// jsonb member doc ((doc->'user'->>'id')::bigint, (doc->>'amount')::bigint).
func BenchmarkDecodeGenerated(b *testing.B) {
	b.Run("flat", func(b *testing.B) {
		cols := []types.Column{{Name: "user_id", Type: types.Int8}, {Name: "amount", Type: types.Int8}}
		msg := []byte(`{"user_id":12345,"amount":42,"note":"padding padding padding"}`)
		benchDecodeInto(b, NewRowDecoder(cols), msg)
	})
	b.Run("generated", func(b *testing.B) {
		cols := []types.Column{{Name: "doc", Type: types.JSONB}, {Name: "user_id", Type: types.Int8}, {Name: "amount", Type: types.Int8}}
		msg := []byte(`{"doc":{"user":{"id":12345,"tier":"gold"},"amount":42,"note":"padding padding padding"}}`)
		doc := &expr.ColRef{Idx: 0, Name: "doc", T: types.JSONB}
		text := func(s string) expr.Expr { return &expr.Const{D: types.NewString(s), T: types.Text} }
		must := func(e expr.Expr, err error) expr.Expr {
			if err != nil {
				b.Fatal(err)
			}
			return e
		}
		user := must(expr.Binary("->", doc, text("user")))
		id := must(expr.Cast(must(expr.Binary("->>", user, text("id"))), types.Int8))
		amount := must(expr.Cast(must(expr.Binary("->>", doc, text("amount"))), types.Int8))
		d := NewRowDecoder(cols)
		d.SetGenerated([]plan.GeneratedColumn{{Col: 1, Expr: id}, {Col: 2, Expr: amount}})
		row, err := d.Decode(msg)
		if err != nil || row[1].I != 12345 || row[2].I != 42 {
			b.Fatalf("decoded %v, %v", row, err)
		}
		b.Run("doc read", func(b *testing.B) { benchDecodeInto(b, d, msg) })
		// No operator reads doc itself: the chains are read from its text
		// (rawPaths).
		fast := NewRowDecoder(cols)
		fast.SetGenerated([]plan.GeneratedColumn{{Col: 1, Expr: id}, {Col: 2, Expr: amount}})
		fast.SkipUnread([]bool{false, true, true})
		row, err = fast.Decode(msg)
		if err != nil || row[1].I != 12345 || row[2].I != 42 || !fast.raw.scanned[0] {
			b.Fatalf("decoded %v, %v", row, err)
		}
		b.Run("doc unread", func(b *testing.B) { benchDecodeInto(b, fast, msg) })
	})
}
