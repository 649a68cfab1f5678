package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// BindRemote opens an existing bucket for restores, without creating it;
// an error wrapping jetstream.ErrBucketNotFound when there is none.
func BindRemote(ctx context.Context, js jetstream.JetStream, bucket string) (*Remote, error) {
	st, err := js.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint bucket %s: %w", bucket, err)
	}
	return &Remote{Bucket: bucket, store: st}, nil
}

// FetchRemote downloads one point of the bucket into parent (created if
// needed) and returns it, verified, with Dir set: the newest whole
// checkpoint when name is "" (nil if the bucket holds none), else the
// point name picks: a checkpoint id ("42", "chk-0000000042",
// "meta/chk-0000000042.json", as SHOW CHECKPOINTS shows it) or a savepoint
// ("savepoints/NAME", "savepoints/NAME.json").
func FetchRemote(ctx context.Context, r *Remote, name, parent string) (*Meta, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	if name == "" {
		return r.DownloadNewest(ctx, parent)
	}
	name = strings.TrimSuffix(name, ".json")
	var m *Meta
	var err error
	if sp, ok := strings.CutPrefix(name, "savepoints/"); ok {
		if err := CheckSavepointName(sp); err != nil {
			return nil, err
		}
		m, err = r.FindSavepoint(ctx, sp)
	} else {
		digits := strings.TrimPrefix(strings.TrimPrefix(name, "meta/"), "chk-")
		id, perr := strconv.ParseUint(digits, 10, 64)
		if perr != nil {
			return nil, fmt.Errorf("%q names no point in bucket %s: write a checkpoint id (42 or chk-0000000042) or savepoints/NAME", name, r.Bucket)
		}
		m, err = r.FindCheckpoint(ctx, id)
	}
	if errors.Is(err, ErrNoSuchPoint) {
		return nil, fmt.Errorf("bucket %s holds no committed %q: %w", r.Bucket, name, ErrNoSuchPoint)
	}
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, fmt.Sprintf("chk-%010d", m.ID))
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	return r.Download(ctx, m, dir)
}
