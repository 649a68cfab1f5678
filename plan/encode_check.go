package plan

import (
	"fmt"
	"math"
	"reflect"

	"github.com/cockroachdb/apd/v3"

	"streamdb/catalog"
)

var (
	descriptorType = reflect.TypeOf((*catalog.Descriptor)(nil))
	decimalType    = reflect.TypeOf((*apd.Decimal)(nil))
)

// sameAs reports the first place where plan b, read back from a record,
// differs from plan a, comparing every field of every node and expression
// by reflection: a field the record does not carry (one added to a node
// after the encoder was written) shows as a difference, so such a plan is
// not recorded rather than restored without it. Functions are not
// compared (calls are rebuilt, not stored), catalog objects are compared
// by name, decimals by value and digits.
func sameAs(a, b reflect.Value, path string) error {
	if a.IsValid() != b.IsValid() {
		return fmt.Errorf("%s: one side missing", path)
	}
	if !a.IsValid() {
		return nil
	}
	if a.Type() != b.Type() {
		return fmt.Errorf("%s: %s read back as %s", path, a.Type(), b.Type())
	}
	switch a.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return nil
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Errorf("%s: nil read back as non-nil or back", path)
			}
			return nil
		}
		return sameAs(a.Elem(), b.Elem(), path)
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Errorf("%s: nil read back as non-nil or back", path)
			}
			return nil
		}
		switch a.Type() {
		case descriptorType:
			if an, bn := a.Elem().FieldByName("Name").String(), b.Elem().FieldByName("Name").String(); an != bn {
				return fmt.Errorf("%s: object %s read back as %s", path, an, bn)
			}
			return nil
		case decimalType:
			ad, bd := a.Interface().(*apd.Decimal), b.Interface().(*apd.Decimal)
			if ad.String() != bd.String() {
				return fmt.Errorf("%s: %s read back as %s", path, ad, bd)
			}
			return nil
		}
		return sameAs(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if err := sameAs(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		// A nil and an empty slice are alike: the record keeps neither.
		if a.Len() != b.Len() {
			return fmt.Errorf("%s: %d elements read back as %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if err := sameAs(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Errorf("%s: %d entries read back as %d", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			if err := sameAs(a.MapIndex(k), b.MapIndex(k), fmt.Sprintf("%s[%v]", path, k)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Float32, reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Errorf("%s: %v read back as %v", path, a.Float(), b.Float())
		}
		return nil
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return fmt.Errorf("%s: %v read back as %v", path, a.Bool(), b.Bool())
		}
		return nil
	case reflect.String:
		if a.String() != b.String() {
			return fmt.Errorf("%s: %q read back as %q", path, a.String(), b.String())
		}
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return fmt.Errorf("%s: %d read back as %d", path, a.Int(), b.Int())
		}
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			return fmt.Errorf("%s: %d read back as %d", path, a.Uint(), b.Uint())
		}
		return nil
	}
	return fmt.Errorf("%s: a %s cannot be compared", path, a.Kind())
}
