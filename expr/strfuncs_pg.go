package expr

import (
	"crypto/md5"
	"encoding/hex"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"streamdb/sqlerr"
	"streamdb/types"
)

// moreStringFunc builds PostgreSQL's remaining text functions (padding,
// slicing, searching, splitting); ok is false for other names. Lengths and
// positions count characters, not bytes, as in a UTF8 database.
func moreStringFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	n := len(args)
	mk := func(t types.Type, want []types.Type, fn func(v []types.Datum) (types.Datum, error)) (Expr, bool, error) {
		if len(args) != len(want) {
			return nil, true, wrongArgs(name, args)
		}
		for i, a := range args {
			t := a.Type()
			if t == types.Unknown {
				continue
			}
			if want[i].IsString() && !t.IsString() || want[i].IsInteger() && !t.IsInteger() {
				return nil, true, wrongArgs(name, args)
			}
		}
		a, err := castArgs(args, want...)
		if err != nil {
			return nil, true, err
		}
		return &Func{Name: name, Args: a, T: t, Fn: strict(fn)}, true, nil
	}
	txt, i4 := types.Text, types.Int4
	switch name {
	case "lpad", "rpad":
		want := []types.Type{txt, i4, txt}[:min(max(n, 2), 3)]
		return mk(txt, want, func(v []types.Datum) (types.Datum, error) {
			fill := " "
			if len(v) == 3 {
				fill = v[2].S
			}
			return pad(v[0].S, v[1].I, fill, name == "lpad")
		})
	case "left", "right":
		return mk(txt, []types.Type{txt, i4}, func(v []types.Datum) (types.Datum, error) {
			r := []rune(v[0].S)
			k := v[1].I
			if name == "right" && k == math.MinInt32 {
				// PostgreSQL negates a negative count, which wraps
				// here, and then drops no characters.
				return v[0], nil
			}
			if k < 0 {
				k = max(int64(len(r))+k, 0)
			}
			k = min(k, int64(len(r)))
			if name == "left" {
				return types.NewString(string(r[:k])), nil
			}
			return types.NewString(string(r[int64(len(r))-k:])), nil
		})
	case "overlay":
		e, err := overlayCall(args)
		return e, true, err
	case "initcap":
		return mk(txt, []types.Type{txt}, func(v []types.Datum) (types.Datum, error) {
			return types.NewString(initcap(v[0].S)), nil
		})
	case "reverse":
		return mk(txt, []types.Type{txt}, func(v []types.Datum) (types.Datum, error) {
			r := []rune(v[0].S)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return types.NewString(string(r)), nil
		})
	case "md5":
		return mk(txt, []types.Type{txt}, func(v []types.Datum) (types.Datum, error) {
			sum := md5.Sum([]byte(v[0].S))
			return types.NewString(hex.EncodeToString(sum[:])), nil
		})
	case "ascii":
		return mk(i4, []types.Type{txt}, func(v []types.Datum) (types.Datum, error) {
			r, _ := utf8.DecodeRuneInString(v[0].S)
			if v[0].S == "" {
				r = 0
			}
			return types.NewInt(int64(r)), nil
		})
	case "starts_with":
		return mk(types.Bool, []types.Type{txt, txt}, func(v []types.Datum) (types.Datum, error) {
			return types.NewBool(strings.HasPrefix(v[0].S, v[1].S)), nil
		})
	case "position":
		// POSITION(needle IN haystack) is the only form the parser reads
		// (PostgreSQL has no position(a, b) call either): it arrives as
		// (needle, haystack) and is strpos(haystack, needle).
		if n != 2 {
			return nil, true, wrongArgs(name, args)
		}
		return moreStringFunc("strpos", []Expr{args[1], args[0]})
	case "strpos":
		return mk(i4, []types.Type{txt, txt}, func(v []types.Datum) (types.Datum, error) {
			i := strings.Index(v[0].S, v[1].S)
			if i < 0 {
				return types.NewInt(0), nil
			}
			return types.NewInt(int64(utf8.RuneCountInString(v[0].S[:i])) + 1), nil
		})
	case "translate":
		return mk(txt, []types.Type{txt, txt, txt}, func(v []types.Datum) (types.Datum, error) {
			return types.NewString(translate(v[0].S, v[1].S, v[2].S)), nil
		})
	case "split_part":
		return mk(txt, []types.Type{txt, txt, i4}, func(v []types.Datum) (types.Datum, error) {
			return splitPart(v[0].S, v[1].S, v[2].I)
		})
	case "concat_ws":
		if n < 2 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(outputText(args), txt)
		if err != nil {
			return nil, true, err
		}
		// Not strict: a NULL separator gives NULL, NULL values are skipped.
		return &Func{Name: name, Args: a, T: txt, Fn: func(v []types.Datum) (types.Datum, error) {
			if v[0].IsNull() {
				return types.Null, nil
			}
			var parts []string
			for _, d := range v[1:] {
				if !d.IsNull() {
					parts = append(parts, d.S)
				}
			}
			return types.NewString(strings.Join(parts, v[0].S)), nil
		}}, true, nil
	}
	return nil, false, nil
}

// pad is lpad/rpad: s cut or filled with repeats of fill to n characters.
func pad(s string, n int64, fill string, left bool) (types.Datum, error) {
	if n <= 0 {
		return types.NewString(""), nil
	}
	r := []rune(s)
	if int64(len(r)) >= n || fill == "" {
		return types.NewString(string(r[:min(n, int64(len(r)))])), nil
	}
	if n*4 > maxTextBytes {
		return types.Null, sqlerr.New(sqlerr.ProgramLimitExceeded, "requested length too large")
	}
	f := []rune(fill)
	width := 1
	for _, c := range f {
		width = max(width, utf8.RuneLen(c))
	}
	var b strings.Builder
	b.Grow(len(s) + int(n-int64(len(r)))*width)
	if !left {
		b.WriteString(s)
	}
	for i := int64(0); i < n-int64(len(r)); i++ {
		b.WriteRune(f[i%int64(len(f))])
	}
	if left {
		b.WriteString(s)
	}
	return types.NewString(b.String()), nil
}

// translate replaces each character of s found in from by the character
// at the same place in to, or drops it when to is shorter.
func translate(s, from, to string) string {
	f, t := []rune(from), []rune(to)
	var b strings.Builder
	for _, c := range s {
		i := -1
		for j, x := range f {
			if x == c {
				i = j
				break
			}
		}
		switch {
		case i < 0:
			b.WriteRune(c)
		case i < len(t):
			b.WriteRune(t[i])
		}
	}
	return b.String()
}

// splitPart is split_part: field n (from 1, or from the end when
// negative) of s split at delim; an empty delim leaves s one field.
func splitPart(s, delim string, n int64) (types.Datum, error) {
	if n == 0 {
		return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "field position must not be zero")
	}
	fields := []string{s}
	if s == "" {
		fields = nil
	} else if delim != "" {
		fields = strings.Split(s, delim)
	}
	if n < 0 {
		n += int64(len(fields)) + 1
	}
	if n < 1 || n > int64(len(fields)) {
		return types.NewString(""), nil
	}
	return types.NewString(fields[n-1]), nil
}

// outputText returns args with each boolean one written as its output
// form (t or f), which is what concat and concat_ws join, rather than its
// cast to text (true or false).
func outputText(args []Expr) []Expr {
	out := make([]Expr, len(args))
	for i, a := range args {
		out[i] = a
		if a.Type() == types.Bool {
			out[i] = &Func{Name: "boolout", Args: []Expr{a}, T: types.Text, Fn: strict(func(v []types.Datum) (types.Datum, error) {
				if v[0].I != 0 {
					return types.NewString("t"), nil
				}
				return types.NewString("f"), nil
			})}
		}
	}
	return out
}

// initcap is PostgreSQL's initcap in a UTF-8 locale (C.UTF-8): each
// letter or digit that follows one is lowered, every other character
// raised, so each word starts with a capital.
func initcap(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	afterAlnum := false
	for _, c := range s {
		if afterAlnum {
			c = unicode.ToLower(c)
		} else {
			c = unicode.ToUpper(c)
		}
		b.WriteRune(c)
		afterAlnum = isAlnum(c)
	}
	return b.String()
}

// isAlnum is the C.UTF-8 locale's alnum class (iswalnum): Unicode's
// alphabetic characters (letters, letter numbers such as 'Ⅰ', and the
// marks that are part of a letter) and decimal digits.
func isAlnum(c rune) bool {
	return unicode.IsLetter(c) || unicode.Is(unicode.Nd, c) || unicode.Is(unicode.Nl, c) || unicode.Is(unicode.Other_Alphabetic, c)
}
