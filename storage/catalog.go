package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"streamdb/catalog"
)

func catalogKey(name string) []byte { return append([]byte{prefixCatalog}, name...) }

// PutDescriptor writes d to the catalog in b.
func PutDescriptor(b *pebble.Batch, d *catalog.Descriptor) error {
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return b.Set(catalogKey(d.Name), v, nil)
}

// DeleteDescriptor removes the object named name from the catalog in b.
func DeleteDescriptor(b *pebble.Batch, name string) error {
	return b.Delete(catalogKey(name), nil)
}

// Descriptors returns every catalog object, ordered by name.
func Descriptors(r Reader) ([]*catalog.Descriptor, error) {
	var out []*catalog.Descriptor
	err := ScanPrefix(r, []byte{prefixCatalog}, func(_, v []byte) error {
		d := new(catalog.Descriptor)
		if err := json.Unmarshal(v, d); err != nil {
			return fmt.Errorf("decode catalog entry: %w", err)
		}
		out = append(out, d)
		return nil
	})
	return out, err
}

// NextObjectID allocates an object id, persisting the counter in b.
func (s *Store) NextObjectID(b *pebble.Batch) (uint32, error) {
	v, ok, err := s.Get(metaKey("next_id"))
	if err != nil {
		return 0, err
	}
	id := uint32(1)
	if ok {
		id = binary.BigEndian.Uint32(v)
	}
	return id, b.Set(metaKey("next_id"), binary.BigEndian.AppendUint32(nil, id+1), nil)
}

// DescriptorNamed returns the catalog object named name in r, or nil.
func DescriptorNamed(r Reader, name string) (*catalog.Descriptor, error) {
	key := catalogKey(name)
	var out *catalog.Descriptor
	err := ScanPrefix(r, key, func(k, v []byte) error {
		if len(k) != len(key) {
			return nil // a longer name with this one as its prefix
		}
		out = new(catalog.Descriptor)
		return json.Unmarshal(v, out)
	})
	return out, err
}
