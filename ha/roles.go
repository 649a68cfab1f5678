package ha

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// RolesBucket is the key-value bucket that holds group's users, owners
// and grants (they live outside the checkpointed state, so no checkpoint
// carries them to the server that takes over).
func RolesBucket(group string) string { return "streamdb_ha_" + group + "_roles" }

const rolesKey = "roles"

// Roles keeps the group's roles in its bucket (meta.RoleReplica). It does
// not check the lease: meta.OpenRoles fences every Store.
type Roles struct {
	kv jetstream.KeyValue
}

// OpenRoles opens (creating it if needed) the group's roles bucket.
func OpenRoles(ctx context.Context, js jetstream.JetStream, group string, replicas int) (*Roles, error) {
	kv, err := js.KeyValue(ctx, RolesBucket(group))
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: RolesBucket(group), History: 1, Replicas: max(1, replicas),
			Storage: jetstream.FileStorage, Description: "streamdb --ha-group users, owners and grants",
		})
	}
	if err != nil {
		return nil, fmt.Errorf("open roles bucket %s: %w", RolesBucket(group), err)
	}
	return &Roles{kv: kv}, nil
}

// Load returns the roles stored last; nil when none were.
func (r *Roles) Load(ctx context.Context) ([]byte, error) {
	e, err := r.kv.Get(ctx, rolesKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return e.Value(), nil
}

// Store replaces the roles.
func (r *Roles) Store(ctx context.Context, data []byte) error {
	_, err := r.kv.Put(ctx, rolesKey, data)
	return err
}
