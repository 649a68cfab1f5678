package expr

import (
	"encoding/base64"
	"encoding/hex"
	"strings"

	"streamdb/sqlerr"
	"streamdb/types"
)

// byteaFunc builds the functions over bytea: length and octet_length (the
// number of bytes), bit_length (8 per byte), encode(bytea, format) and
// decode(text, format) for the formats hex, base64 and escape, and
// octet_length and bit_length of text (of its UTF-8 bytes). ok is false when name with these arguments is not one of them.
func byteaFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	mk := func(t types.Type, a []Expr, fn func(v []types.Datum) (types.Datum, error)) (Expr, bool, error) {
		return &Func{Name: name, Args: a, T: t, Fn: strict(fn)}, true, nil
	}
	isBytea := func(i int) bool { return len(args) > i && args[i].Type() == types.Bytea }
	switch name {
	case "length", "octet_length", "bit_length":
		if len(args) != 1 {
			return nil, false, nil
		}
		per := int64(1) // what a byte counts for
		if name == "bit_length" {
			per = 8
		}
		count := func(v []types.Datum) (types.Datum, error) {
			return types.NewInt(int64(len(v[0].S)) * per), nil
		}
		if !isBytea(0) {
			if name == "length" || !(args[0].Type().IsString() || args[0].Type() == types.Unknown) {
				return nil, false, nil
			}
			a, err := castArgs(args, types.Text)
			if err != nil {
				return nil, true, err
			}
			return mk(types.Int4, a, count)
		}
		return mk(types.Int4, args, count)
	case "encode":
		if len(args) != 2 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Bytea, types.Text)
		if err != nil {
			return nil, true, wrongArgs(name, args)
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			s, err := encodeBytes(v[0].S, v[1].S)
			return types.NewString(s), err
		})
	case "decode":
		if len(args) != 2 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Text, types.Text)
		if err != nil {
			return nil, true, wrongArgs(name, args)
		}
		return mk(types.Bytea, a, func(v []types.Datum) (types.Datum, error) {
			b, err := decodeBytes(v[0].S, v[1].S)
			return types.NewBytes(b), err
		})
	}
	return nil, false, nil
}

// byteaConcat is bytea || bytea.
func byteaConcat(l, r Expr) (Expr, error) {
	var err error
	if l, err = Cast(l, types.Bytea); err != nil {
		return nil, err
	}
	if r, err = Cast(r, types.Bytea); err != nil {
		return nil, err
	}
	return &Func{Name: "||", Infix: true, Args: []Expr{l, r}, T: types.Bytea, Fn: func(a []types.Datum) (types.Datum, error) {
		if a[0].IsNull() || a[1].IsNull() {
			return types.Null, nil
		}
		return types.NewBytes(a[0].S + a[1].S), nil
	}}, nil
}

func unknownEncoding(format string) error {
	return sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized encoding: %q", format).
		WithHint(`Valid encodings are "base64", "escape", and "hex".`)
}

func encodeBytes(b, format string) (string, error) {
	switch strings.ToLower(format) {
	case "hex":
		return hex.EncodeToString([]byte(b)), nil
	case "base64":
		return base64.StdEncoding.EncodeToString([]byte(b)), nil
	case "escape":
		var sb strings.Builder
		for i := 0; i < len(b); i++ {
			c := b[i]
			switch {
			case c == '\\':
				sb.WriteString(`\\`)
			case c == 0 || c >= 0x80:
				sb.WriteByte('\\')
				sb.WriteByte('0' + c>>6)
				sb.WriteByte('0' + c>>3&7)
				sb.WriteByte('0' + c&7)
			default:
				sb.WriteByte(c)
			}
		}
		return sb.String(), nil
	}
	return "", unknownEncoding(format)
}

func decodeBytes(s, format string) (string, error) {
	switch strings.ToLower(format) {
	case "hex":
		if len(s)%2 != 0 {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid hexadecimal digit")
		}
		return string(b), nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid base64 data")
		}
		return string(b), nil
	case "escape":
		d, err := types.ParseBytea(s)
		if err != nil {
			return "", err
		}
		return d.S, nil
	}
	return "", unknownEncoding(format)
}
