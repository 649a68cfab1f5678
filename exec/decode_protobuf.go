package exec

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"streamdb/sqlerr"
	"streamdb/types"
)

// Protobuf messages (format = 'protobuf') decode against the message
// descriptor of a FileDescriptorSet stored with the stream.
//
// The top-level fields columns read are found in one pass over the wire
// format (package protowire), guided by the descriptor, and converted
// from their bytes: scalars, enums, repeated scalars (packed or not),
// google.protobuf.Timestamp and the wrapper types straight to the
// column's type; nested messages, maps and repeated messages (for a json
// or jsonb column, or a dotted column name) to objects first. A message
// field sent more than once merges, as Protobuf parsers merge it.
// (dynamicpb's generic unmarshalling does the same at a few times the
// cost of decoding the same event as JSON; the wire is read directly.)
//
// A field the message does not hold reads as proto3 gives it to every
// reader: a field without presence (a plain proto3 scalar or enum) as its
// default (0, '', false, the enum's first value), a field with presence
// (proto3 optional, proto2 optional, oneof members, messages, Timestamp,
// wrappers) as NULL, a repeated field as an empty array, a map as '{}'.
// A default that the column's type has no value for (the empty string of
// a string field read as numeric, uuid, date) is NULL.

// LoadProtoMessage returns the descriptor of message name in the
// serialized FileDescriptorSet set; errors say what to change.
func LoadProtoMessage(set []byte, name string) (protoreflect.MessageDescriptor, error) {
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(set, &fds); err != nil {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "the schema file is not a compiled Protobuf FileDescriptorSet: %v", err).
			WithHint("Compile the .proto files with protoc --include_imports --descriptor_set_out=FILE (or buf build -o FILE).")
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "the Protobuf descriptor set does not hold complete files: %v", err).
			WithHint("Compile with protoc --include_imports so that the set holds the files the message's file imports.")
	}
	if name == "" {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "format 'protobuf' needs the option message").
			WithHint("Name the message type of the stream's messages with its full name, e.g. WITH (..., message = 'shop.Order').")
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(name))
	md, ok := d.(protoreflect.MessageDescriptor)
	if err != nil || !ok {
		var names []string
		files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
			for i := 0; i < f.Messages().Len(); i++ {
				names = append(names, string(f.Messages().Get(i).FullName()))
			}
			return true
		})
		slices.Sort(names)
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "message %q is not in the Protobuf descriptor set", name).
			WithHint("Give the message's full name (package.Message); the set holds: %s.", strings.Join(names, ", "))
	}
	return md, nil
}

// protoAccess says how a column reads its field.
type protoAccess uint8

const (
	accScalar    protoAccess = iota // a singular scalar or enum
	accTimestamp                    // a singular google.protobuf.Timestamp
	accWrapper                      // a singular google.protobuf.*Value
	accRepeated                     // a repeated scalar or enum
	accMessage                      // anything else: read as a generic value (protoFieldValue)
)

// protoField is a top-level field that some column reads from the wire.
type protoField struct {
	fd   protoreflect.FieldDescriptor
	seen bool
	wt   protowire.Type
	last []byte     // the last value's bytes (with its length for bytes)
	segs []protoSeg // repeated and message fields: every value, in order
}

type protoSeg struct {
	wt  protowire.Type
	raw []byte
}

type protoCol struct {
	formatColumn
	acc     protoAccess
	field   int                            // index in protoDecoder.fields of the top-level field
	fdPath  []protoreflect.FieldDescriptor // the fields of the path
	missing *types.Datum                   // the value of a column added with a default, which no field fills
	deflt   types.Datum                    // proto3 default of a field without presence
}

type protoDecoder struct {
	md      protoreflect.MessageDescriptor
	fields  []protoField
	byNum   []int16 // field number → index in fields, -1 for none
	cols    []protoCol
	scratch []byte
}

func newProtoDecoder(set []byte, name string, cols []formatColumn, missing []*types.Datum, strict bool) (*protoDecoder, error) {
	md, err := LoadProtoMessage(set, name)
	if err != nil {
		return nil, err
	}
	d := &protoDecoder{md: md}
	maxNum := 0
	for _, c := range cols {
		pc := protoCol{formatColumn: c, field: -1}
		if c.col < len(missing) {
			pc.missing = missing[c.col]
		}
		cur := md
		for i, part := range c.path {
			fd := cur.Fields().ByName(protoreflect.Name(part))
			if fd == nil {
				if pc.missing != nil || !strict {
					break // a column added with a default: never in messages
				}
				var names []string
				for j := 0; j < cur.Fields().Len(); j++ {
					names = append(names, string(cur.Fields().Get(j).Name()))
				}
				return nil, errNoField(c, "message "+string(cur.FullName()), names)
			}
			pc.fdPath = append(pc.fdPath, fd)
			if i < len(c.path)-1 {
				if fd.Message() == nil || fd.IsList() || fd.IsMap() {
					return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q reads into field %q, which is not a nested message", c.name, fd.Name()).
						WithHint("A dotted column name reads a field of a singular message field.")
				}
				cur = fd.Message()
			}
		}
		if len(pc.fdPath) < len(c.path) {
			d.cols = append(d.cols, pc)
			continue
		}
		fd := pc.fdPath[len(pc.fdPath)-1]
		if err := checkProtoFits(c, fd); err != nil {
			return nil, err
		}
		pc.acc = accMessage
		if len(c.path) == 1 && c.typ != types.JSON && c.typ != types.JSONB {
			switch {
			case fd.IsMap():
			case fd.IsList():
				if fd.Message() == nil {
					pc.acc = accRepeated
				}
			case fd.Message() == nil:
				pc.acc = accScalar
			case fd.Message().FullName() == "google.protobuf.Timestamp":
				pc.acc = accTimestamp
			case isProtoWrapper(fd.Message()):
				pc.acc = accWrapper
			}
		}
		if pc.acc == accScalar && !fd.HasPresence() {
			// A default the column's type has no value for (the empty
			// string of a field read as numeric, uuid or date) is NULL.
			if v, err := valueDatum(protoScalar(fd, fd.Default()), &pc.formatColumn, nil); err == nil {
				pc.deflt = v
			}
		}
		pc.field = d.addField(pc.fdPath[0])
		maxNum = max(maxNum, int(pc.fdPath[0].Number()))
		d.cols = append(d.cols, pc)
	}
	d.byNum = make([]int16, maxNum+1)
	for i := range d.byNum {
		d.byNum[i] = -1
	}
	for i, f := range d.fields {
		d.byNum[f.fd.Number()] = int16(i)
	}
	return d, nil
}

func (d *protoDecoder) addField(fd protoreflect.FieldDescriptor) int {
	for i, f := range d.fields {
		if f.fd == fd {
			return i
		}
	}
	d.fields = append(d.fields, protoField{fd: fd})
	return len(d.fields) - 1
}

func isProtoWrapper(md protoreflect.MessageDescriptor) bool {
	if md.ParentFile() == nil || md.ParentFile().Path() != "google/protobuf/wrappers.proto" {
		return strings.HasPrefix(string(md.FullName()), "google.protobuf.") && strings.HasSuffix(string(md.Name()), "Value") &&
			md.Fields().Len() == 1 && md.Fields().Get(0).Name() == "value" && md.Fields().Get(0).Message() == nil
	}
	return true
}

// checkProtoFits refuses, at CREATE, a column whose type cannot hold
// its field's kind.
func checkProtoFits(c formatColumn, fd protoreflect.FieldDescriptor) error {
	if fd.Kind() == protoreflect.GroupKind || (fd.IsMap() && fd.MapValue().Kind() == protoreflect.GroupKind) {
		return sqlerr.New(sqlerr.FeatureNotSupported, "column %q reads field %q, a proto2 group, which streamdb does not read", c.name, fd.Name()).
			WithHint("Declare the field as a message field instead of a group, or leave the column out.")
	}
	t := c.typ
	if t == types.JSON || t == types.JSONB {
		return nil
	}
	desc := protoKindName(fd)
	switch {
	case fd.IsMap():
		return errFieldType(c, desc, "jsonb")
	case fd.IsList():
		if !t.IsArray() {
			if fd.Message() != nil {
				return errFieldType(c, desc, "jsonb")
			}
			return errFieldType(c, desc, protoSQLType(fd)+"[] or jsonb")
		}
		if fd.Message() != nil {
			return errFieldType(c, desc, "jsonb")
		}
		return nil
	case t.IsArray():
		return errFieldType(c, desc, protoSQLType(fd))
	case fd.Message() != nil:
		if fd.Message().FullName() == "google.protobuf.Timestamp" {
			if t.IsTime() || t == types.Date || t.IsString() {
				return nil
			}
			return errFieldType(c, desc, "timestamptz")
		}
		if isProtoWrapper(fd.Message()) {
			return checkProtoFits(c, fd.Message().Fields().Get(0))
		}
		return errFieldType(c, desc, "jsonb (or read its fields with dotted column names)")
	case fd.Kind() == protoreflect.BytesKind:
		if t != types.Bytea {
			return errFieldType(c, desc, "bytea")
		}
	case fd.Kind() == protoreflect.BoolKind:
		if t != types.Bool && !t.IsString() {
			return errFieldType(c, desc, "boolean")
		}
	}
	return nil
}

func protoKindName(fd protoreflect.FieldDescriptor) string {
	k := fd.Kind().String()
	if fd.Message() != nil {
		k = string(fd.Message().FullName())
	} else if fd.Enum() != nil {
		k = "enum " + string(fd.Enum().FullName())
	}
	switch {
	case fd.IsMap():
		return "a map"
	case fd.IsList():
		return "repeated " + k
	}
	return k
}

// protoSQLType is the SQL type a field's values map to.
func protoSQLType(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return "boolean"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "integer"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "bigint"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "numeric"
	case protoreflect.FloatKind:
		return "real"
	case protoreflect.DoubleKind:
		return "double precision"
	case protoreflect.BytesKind:
		return "bytea"
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return "jsonb"
	}
	return "text"
}

func (d *protoDecoder) decode(data []byte, row types.Row) error {
	for i := range d.fields {
		f := &d.fields[i]
		f.seen, f.last, f.segs = false, nil, f.segs[:0]
	}
	b := data
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errProtoWire(data, b, protowire.ParseError(n))
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, wt, b)
		if m < 0 {
			return errProtoWire(data, b, protowire.ParseError(m))
		}
		if int(num) < len(d.byNum) {
			if i := d.byNum[num]; i >= 0 {
				f := &d.fields[i]
				f.seen, f.wt, f.last = true, wt, b[:m]
				if f.fd.IsList() || f.fd.Message() != nil {
					f.segs = append(f.segs, protoSeg{wt, b[:m]})
				}
			}
		}
		b = b[m:]
	}
	for i := range d.cols {
		c := &d.cols[i]
		if len(c.fdPath) < len(c.path) {
			if c.missing != nil {
				row[c.col] = *c.missing
			}
			continue
		}
		v, err := d.column(c)
		if err != nil {
			return fmt.Errorf("field %q: %w", strings.Join(c.path, "."), err)
		}
		row[c.col] = v
	}
	return nil
}

func errProtoWire(data, at []byte, err error) error {
	return fmt.Errorf("not a Protobuf message: %v at byte %d", err, len(data)-len(at))
}

// column reads column c's value.
func (d *protoDecoder) column(c *protoCol) (types.Datum, error) {
	f := &d.fields[c.field]
	if c.acc == accMessage {
		v, err := protoFieldValue(f.fd, f.seen, f.wt, f.last, f.segs, 0)
		if err != nil {
			return types.Null, err
		}
		return valueDatum(lookupPath(v, c.path[1:]), &c.formatColumn, d.scratch)
	}
	if !f.seen {
		switch {
		case c.acc == accRepeated:
			return types.NewString("{}"), nil
		case c.acc == accScalar && !f.fd.HasPresence():
			return c.deflt, nil
		}
		return types.Null, nil
	}
	switch c.acc {
	case accScalar:
		v, err := protoWireScalar(f.fd, f.wt, f.last)
		if err != nil {
			return types.Null, err
		}
		if i, ok := v.(int64); ok && c.typ.IsInteger() && c.mod.IsZero() {
			return types.CheckIntRange(i, c.typ)
		}
		return valueDatum(v, &c.formatColumn, d.scratch)
	case accRepeated:
		var vals []any
		for _, seg := range f.segs {
			var err error
			if vals, err = appendProtoRepeated(vals, f.fd, seg.wt, seg.raw); err != nil {
				return types.Null, err
			}
		}
		if vals == nil {
			vals = []any{}
		}
		return valueDatum(vals, &c.formatColumn, d.scratch)
	case accTimestamp:
		var secs, nanos int64
		err := protoSubFields(f, func(num protowire.Number, wt protowire.Type, raw []byte) error {
			if wt != protowire.VarintType {
				return nil
			}
			v, _ := protowire.ConsumeVarint(raw)
			switch num {
			case 1:
				secs = int64(v)
			case 2:
				nanos = int64(int32(v))
			}
			return nil
		})
		if err != nil {
			return types.Null, err
		}
		if nanos < 0 || nanos > 999999999 || secs > math.MaxInt64/1_000_000-1 || secs < math.MinInt64/1_000_000+1 {
			return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: %d seconds and %d nanoseconds", secs, nanos)
		}
		return valueDatum(fvTime(secs*1e6+nanos/1000), &c.formatColumn, d.scratch)
	case accWrapper:
		vfd := f.fd.Message().Fields().Get(0)
		var v any = protoScalar(vfd, vfd.Default())
		err := protoSubFields(f, func(num protowire.Number, wt protowire.Type, raw []byte) error {
			if num != 1 {
				return nil
			}
			var err error
			v, err = protoWireScalar(vfd, wt, raw)
			return err
		})
		if err != nil {
			return types.Null, err
		}
		return valueDatum(v, &c.formatColumn, d.scratch)
	}
	return types.Null, fmt.Errorf("unknown access %d", c.acc)
}

// protoSubFields calls fn for each field of the singular message field
// f, over all its occurrences (which merge, in order).
func protoSubFields(f *protoField, fn func(protowire.Number, protowire.Type, []byte) error) error {
	for _, seg := range f.segs {
		if seg.wt != protowire.BytesType {
			return fmt.Errorf("wire type %d where a message belongs", seg.wt)
		}
		b, n := protowire.ConsumeBytes(seg.raw)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if err := protoEachField(b, fn); err != nil {
			return err
		}
	}
	return nil
}

// appendProtoRepeated appends the values of one occurrence of the
// repeated scalar field fd (packed or not).
func appendProtoRepeated(vals []any, fd protoreflect.FieldDescriptor, segWT protowire.Type, seg []byte) ([]any, error) {
	wt := protoWireType(fd.Kind())
	if wt == protowire.BytesType || segWT != protowire.BytesType {
		// one value (strings and bytes are never packed)
		v, err := protoWireScalar(fd, segWT, seg)
		return append(vals, v), err
	}
	packed, n := protowire.ConsumeBytes(seg)
	if n < 0 {
		return nil, protowire.ParseError(n)
	}
	for len(packed) > 0 {
		var m int
		switch wt {
		case protowire.VarintType:
			_, m = protowire.ConsumeVarint(packed)
		case protowire.Fixed32Type:
			_, m = protowire.ConsumeFixed32(packed)
		default:
			_, m = protowire.ConsumeFixed64(packed)
		}
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		v, err := protoWireScalar(fd, wt, packed[:m])
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
		packed = packed[m:]
	}
	return vals, nil
}

// protoWireType is the wire type of a scalar kind's values.
func protoWireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	}
	return protowire.VarintType
}

// protoWireScalar decodes one value of the scalar field fd from its
// wire bytes raw (of wire type wt).
func protoWireScalar(fd protoreflect.FieldDescriptor, wt protowire.Type, raw []byte) (any, error) {
	want := protoWireType(fd.Kind())
	if wt != want {
		return nil, fmt.Errorf("wire type %d does not match the field's type %s", wt, fd.Kind())
	}
	switch want {
	case protowire.VarintType:
		v, n := protowire.ConsumeVarint(raw)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		switch fd.Kind() {
		case protoreflect.BoolKind:
			return v != 0, nil
		case protoreflect.Int32Kind:
			return int64(int32(v)), nil
		case protoreflect.Uint32Kind:
			return int64(uint32(v)), nil
		case protoreflect.Sint32Kind:
			return int64(int32(protowire.DecodeZigZag(v & math.MaxUint32))), nil
		case protoreflect.Sint64Kind:
			return protowire.DecodeZigZag(v), nil
		case protoreflect.Uint64Kind:
			return v, nil
		case protoreflect.EnumKind:
			return protoEnum(fd, protoreflect.EnumNumber(int32(v))), nil
		}
		return int64(v), nil
	case protowire.Fixed32Type:
		v, n := protowire.ConsumeFixed32(raw)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		switch fd.Kind() {
		case protoreflect.FloatKind:
			return fvFloat32(math.Float32frombits(v)), nil
		case protoreflect.Sfixed32Kind:
			return int64(int32(v)), nil
		}
		return int64(v), nil
	case protowire.Fixed64Type:
		v, n := protowire.ConsumeFixed64(raw)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		switch fd.Kind() {
		case protoreflect.DoubleKind:
			return math.Float64frombits(v), nil
		case protoreflect.Sfixed64Kind:
			return int64(v), nil
		}
		return v, nil
	}
	b, n := protowire.ConsumeBytes(raw)
	if n < 0 {
		return nil, protowire.ParseError(n)
	}
	if fd.Kind() == protoreflect.BytesKind {
		return b, nil
	}
	return string(b), nil
}

func protoEnum(fd protoreflect.FieldDescriptor, n protoreflect.EnumNumber) fvEnum {
	if ev := fd.Enum().Values().ByNumber(n); ev != nil {
		return fvEnum{name: string(ev.Name()), num: int64(n)}
	}
	return fvEnum{num: int64(n)}
}

// protoScalar converts a scalar field's value.
func protoScalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return v.Bool()
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return v.Int()
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return int64(v.Uint())
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return v.Uint()
	case protoreflect.FloatKind:
		return fvFloat32(v.Float())
	case protoreflect.DoubleKind:
		return v.Float()
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.BytesKind:
		return v.Bytes()
	case protoreflect.EnumKind:
		return protoEnum(fd, v.Enum())
	}
	return nil
}

// protoFieldValue is the generic value of field fd from its wire
// occurrences (last: the last one's bytes; segs: all of them, for
// repeated and message fields): NULL for a field with presence that is
// not there, the default for one without.
func protoFieldValue(fd protoreflect.FieldDescriptor, seen bool, wt protowire.Type, last []byte, segs []protoSeg, depth int) (any, error) {
	if depth > 100 {
		return nil, fmt.Errorf("messages nested more than 100 deep")
	}
	switch {
	case fd.IsMap():
		o := &fvObject{}
		kfd, vfd := fd.MapKey(), fd.MapValue()
		for _, seg := range segs {
			entry, err := protoSegBytes(seg)
			if err != nil {
				return nil, err
			}
			var k, v any
			var kseen, vseen bool
			var vwt protowire.Type
			var vlast []byte
			var vsegs []protoSeg
			err = protoEachField(entry, func(num protowire.Number, wt protowire.Type, raw []byte) error {
				var err error
				switch num {
				case 1:
					k, err = protoWireScalar(kfd, wt, raw)
					kseen = true
				case 2:
					vseen, vwt, vlast = true, wt, raw
					vsegs = append(vsegs, protoSeg{wt, raw})
				}
				return err
			})
			if err != nil {
				return nil, err
			}
			if !kseen {
				k = protoScalar(kfd, kfd.Default())
			}
			if vfd.Message() != nil && !vseen {
				v = protoEmptyMessage(vfd.Message())
			} else if v, err = protoFieldValue(vfd, vseen, vwt, vlast, vsegs, depth+1); err != nil {
				return nil, err
			}
			var key string
			switch k := k.(type) {
			case string:
				key = k
			default:
				key = fmt.Sprint(k)
			}
			found := false
			for i, ok := range o.keys {
				if ok == key { // a later entry replaces an earlier one
					o.vals[i], found = v, true
				}
			}
			if !found {
				o.keys = append(o.keys, key)
				o.vals = append(o.vals, v)
			}
		}
		sortObject(o)
		return o, nil
	case fd.IsList():
		out := []any{}
		for _, seg := range segs {
			if fd.Message() == nil {
				var err error
				if out, err = appendProtoRepeated(out, fd, seg.wt, seg.raw); err != nil {
					return nil, err
				}
				continue
			}
			b, err := protoSegBytes(seg)
			if err != nil {
				return nil, err
			}
			v, err := protoMessageValue(fd.Message(), b, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case !seen:
		if fd.HasPresence() {
			return nil, nil
		}
		return protoScalar(fd, fd.Default()), nil
	case fd.Message() != nil:
		// Occurrences of a message field merge: their bytes concatenated
		// are the merged message's.
		var b []byte
		for i, seg := range segs {
			sb, err := protoSegBytes(seg)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				b = sb
			} else {
				b = append(b[:len(b):len(b)], sb...)
			}
		}
		return protoMessageValue(fd.Message(), b, depth+1)
	}
	return protoWireScalar(fd, wt, last)
}

// protoSegBytes returns the contents of a length-delimited occurrence.
func protoSegBytes(seg protoSeg) ([]byte, error) {
	if seg.wt != protowire.BytesType {
		return nil, fmt.Errorf("wire type %d where a message belongs", seg.wt)
	}
	b, n := protowire.ConsumeBytes(seg.raw)
	if n < 0 {
		return nil, protowire.ParseError(n)
	}
	return b, nil
}

// protoEachField calls fn for each field of the message bytes b.
func protoEachField(b []byte, fn func(protowire.Number, protowire.Type, []byte) error) error {
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, wt, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		if err := fn(num, wt, b[:m]); err != nil {
			return err
		}
		b = b[m:]
	}
	return nil
}

// protoEmptyMessage is the value of a message with no fields set.
func protoEmptyMessage(md protoreflect.MessageDescriptor) any {
	v, _ := protoMessageValue(md, nil, 0)
	return v
}

// protoMessageValue converts the message bytes b of type md: Timestamp
// to a timestamp, a wrapper to its value, others to an object of their
// fields in declaration order (a field with presence only when set).
func protoMessageValue(md protoreflect.MessageDescriptor, b []byte, depth int) (any, error) {
	fields := md.Fields()
	type acc struct {
		seen bool
		wt   protowire.Type
		last []byte
		segs []protoSeg
	}
	accs := make([]acc, fields.Len())
	err := protoEachField(b, func(num protowire.Number, wt protowire.Type, raw []byte) error {
		fd := fields.ByNumber(num)
		if fd == nil {
			return nil
		}
		a := &accs[fd.Index()]
		a.seen, a.wt, a.last = true, wt, raw
		if fd.IsList() || fd.Message() != nil {
			a.segs = append(a.segs, protoSeg{wt, raw})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if md.FullName() == "google.protobuf.Timestamp" {
		var secs, nanos int64
		if a := accs[fields.ByNumber(1).Index()]; a.seen {
			v, err := protoWireScalar(fields.ByNumber(1), a.wt, a.last)
			if err != nil {
				return nil, err
			}
			secs = v.(int64)
		}
		if a := accs[fields.ByNumber(2).Index()]; a.seen {
			v, err := protoWireScalar(fields.ByNumber(2), a.wt, a.last)
			if err != nil {
				return nil, err
			}
			nanos = v.(int64)
		}
		if nanos < 0 || nanos > 999999999 || secs > math.MaxInt64/1_000_000-1 || secs < math.MinInt64/1_000_000+1 {
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: %d seconds and %d nanoseconds", secs, nanos)
		}
		return fvTime(secs*1e6 + nanos/1000), nil
	}
	if isProtoWrapper(md) {
		fd := fields.Get(0)
		a := accs[0]
		if !a.seen {
			return protoScalar(fd, fd.Default()), nil
		}
		return protoWireScalar(fd, a.wt, a.last)
	}
	o := &fvObject{}
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		a := accs[i]
		if !a.seen && fd.HasPresence() {
			continue
		}
		v, err := protoFieldValue(fd, a.seen, a.wt, a.last, a.segs, depth)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", fd.Name(), err)
		}
		o.keys = append(o.keys, string(fd.Name()))
		o.vals = append(o.vals, v)
	}
	return o, nil
}

// sortObject orders a map's entries by key.
func sortObject(o *fvObject) {
	idx := make([]int, len(o.keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(o.keys[a], o.keys[b]) })
	keys, vals := make([]string, len(idx)), make([]any, len(idx))
	for i, j := range idx {
		keys[i], vals[i] = o.keys[j], o.vals[j]
	}
	o.keys, o.vals = keys, vals
}
