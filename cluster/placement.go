package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
)

// A Placement is the cluster's map of view-groups to nodes as stored.
type Placement struct {
	// Version counts the map's changes: each store writes Version+1.
	Version uint64 `json:"version"`
	// Writer is the node that stored this version.
	Writer string `json:"writer"`
	// Groups maps a group's ID to where it runs.
	Groups map[uint32]Assignment `json:"groups"`
	// rev is the bucket revision this map was read at (0: none stored):
	// the compare-and-set token of the next store.
	rev uint64
}

// Nodes returns the nodes the map names, sorted, without repeats.
func (p Placement) Nodes() []string {
	var out []string
	for _, a := range p.Groups {
		if !slices.Contains(out, a.Node) {
			out = append(out, a.Node)
		}
	}
	slices.Sort(out)
	return out
}

// ErrStale: the placement map changed since it was read; read it again.
var ErrStale = errors.New("the placement map changed since it was read")

const placementKey = "map"

// PlacementStore is the placement map in its key-value bucket. The map
// is one entry, so a version is all or nothing, and every write is a
// compare-and-set on the revision it was computed from: a writer that
// read an older version (a coordinator that lost its lease and has not
// noticed yet) fails with ErrStale instead of overwriting a newer map.
type PlacementStore struct {
	kv jetstream.KeyValue
}

// OpenPlacement opens (creating it if needed) cluster's placement bucket.
func OpenPlacement(ctx context.Context, js jetstream.JetStream, cluster string, replicas int) (*PlacementStore, error) {
	if err := ValidateName(cluster); err != nil {
		return nil, err
	}
	name := PlacementBucket(cluster)
	kv, err := js.KeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: name, History: 1, Replicas: max(1, replicas),
			Storage: jetstream.FileStorage, Description: "streamdb --cluster placement of view-groups",
		})
	}
	if err != nil {
		return nil, fmt.Errorf("open placement bucket %s: %w", name, err)
	}
	return &PlacementStore{kv: kv}, nil
}

// Load reads the current map (an empty one at version 0 when none was
// stored).
func (s *PlacementStore) Load(ctx context.Context) (Placement, error) {
	e, err := s.kv.Get(ctx, placementKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Placement{Groups: map[uint32]Assignment{}}, nil
	}
	if err != nil {
		return Placement{}, err
	}
	var p Placement
	if err := json.Unmarshal(e.Value(), &p); err != nil {
		return Placement{}, fmt.Errorf("placement map holds %q: %w", e.Value(), err)
	}
	if p.Groups == nil {
		p.Groups = map[uint32]Assignment{}
	}
	p.rev = e.Revision()
	return p, nil
}

// Store writes groups as the version after base, by compare-and-set on
// the revision base was read at; ErrStale when the map changed since.
func (s *PlacementStore) Store(ctx context.Context, base Placement, writer string, groups map[uint32]Assignment) (Placement, error) {
	next := Placement{Version: base.Version + 1, Writer: writer, Groups: groups}
	data, err := json.Marshal(next)
	if err != nil {
		return Placement{}, err
	}
	if base.rev == 0 {
		next.rev, err = s.kv.Create(ctx, placementKey, data)
		if errors.Is(err, jetstream.ErrKeyExists) {
			return Placement{}, ErrStale
		}
	} else {
		next.rev, err = s.kv.Update(ctx, placementKey, data, base.rev)
		if isWrongRevision(err) {
			return Placement{}, ErrStale
		}
	}
	if err != nil {
		return Placement{}, err
	}
	return next, nil
}

// Update reads the map, computes the next one with compute and stores
// it, reading again (at most a few times) when another writer got there
// first. When compute returns the map unchanged nothing is written.
func (s *PlacementStore) Update(ctx context.Context, writer string, compute func(Placement) map[uint32]Assignment) (Placement, error) {
	const attempts = 5
	var err error
	for range attempts {
		var cur Placement
		if cur, err = s.Load(ctx); err != nil {
			return Placement{}, err
		}
		groups := compute(cur)
		if cur.rev != 0 && maps.EqualFunc(cur.Groups, groups, sameAssignment) {
			return cur, nil
		}
		var next Placement
		next, err = s.Store(ctx, cur, writer, groups)
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, ErrStale) {
			return Placement{}, err
		}
	}
	return Placement{}, err
}

func sameAssignment(a, b Assignment) bool { return a.Node == b.Node && slices.Equal(a.Views, b.Views) }
