package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
)

// A Remote keeps checkpoints in a JetStream object store bucket, so that
// a server on another machine can restore them. The bucket holds
//
//	files/<name>.<size>.<crc32c>   one object per checkpoint file, named by
//	                               content (Pebble's sstables are immutable,
//	                               so a file shared with an earlier
//	                               checkpoint is uploaded once)
//	meta/chk-<id>.json             a checkpoint's metadata, put after
//	                               every file it lists: the commit marker
//	savepoints/<name>.json         a savepoint's metadata, likewise
//
// An upload cut short (a crash, a lost connection) leaves file objects
// without metadata; they are never read, and Retain deletes them.
type Remote struct {
	Bucket string
	store  jetstream.ObjectStore
}

// RemoteScheme prefixes a bucket given as a checkpoint directory.
const RemoteScheme = "nats-object://"

// OpenRemote opens (creating it if needed) the bucket, with replicas
// copies of each object on a NATS cluster (0: 1).
func OpenRemote(ctx context.Context, js jetstream.JetStream, bucket string, replicas int) (*Remote, error) {
	st, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: bucket, Replicas: max(1, replicas), Storage: jetstream.FileStorage,
		Description: "streamdb checkpoints",
	})
	if err != nil {
		return nil, fmt.Errorf("open checkpoint bucket %s: %w", bucket, err)
	}
	return &Remote{Bucket: bucket, store: st}, nil
}

func fileObject(f File) string {
	return fmt.Sprintf("files/%s.%d.%08x", filepath.ToSlash(f.Name), f.Size, f.CRC32C)
}

func metaObject(id uint64) string { return fmt.Sprintf("meta/chk-%010d.json", id) }

func savepointObject(name string) string { return "savepoints/" + name + ".json" }

// metaName is the object that commits m: a checkpoint's by id, a
// savepoint's by name.
func metaName(m *Meta) string {
	if m.Kind == KindSavepoint {
		return savepointObject(m.Name)
	}
	return metaObject(m.ID)
}

// Location is where a checkpoint with this id lives in the bucket.
func (r *Remote) Location(id uint64) string { return RemoteScheme + r.Bucket + "/" + metaObject(id) }

// LocationOf is where m (a checkpoint or savepoint) lives in the bucket.
func (r *Remote) LocationOf(m *Meta) string { return RemoteScheme + r.Bucket + "/" + metaName(m) }

// Upload copies the completed local checkpoint m (files as listed in
// m.Files, under m.Dir) into the bucket, skipping files already there,
// and puts its metadata last. It returns the bytes it uploaded. fence,
// when not nil, runs just before the metadata is put: an error from it
// (the server lost its lease) leaves the checkpoint uncommitted.
func (r *Remote) Upload(ctx context.Context, m *Meta, fence func() error) (int64, error) {
	var sent int64
	for _, f := range m.Files {
		name := fileObject(f)
		if _, err := r.store.GetInfo(ctx, name); err == nil {
			continue
		} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
			return sent, fmt.Errorf("look up %s in bucket %s: %w", name, r.Bucket, err)
		}
		fh, err := os.Open(filepath.Join(m.Dir, f.Name))
		if err != nil {
			return sent, err
		}
		_, err = r.store.Put(ctx, jetstream.ObjectMeta{Name: name}, fh)
		fh.Close()
		if err != nil {
			return sent, fmt.Errorf("upload %s to bucket %s: %w", f.Name, r.Bucket, err)
		}
		sent += f.Size
	}
	if fence != nil {
		if err := fence(); err != nil {
			return sent, err
		}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return sent, err
	}
	if _, err := r.store.PutBytes(ctx, metaName(m), data); err != nil {
		return sent, fmt.Errorf("upload metadata of %s %d to bucket %s: %w", m.Kind, m.ID, r.Bucket, err)
	}
	return sent, nil
}

// List returns the committed checkpoints in the bucket (those whose
// metadata was put), oldest first. Their Dir is empty.
func (r *Remote) List(ctx context.Context) ([]*Meta, error) {
	return r.listMetas(ctx, "meta/")
}

// Savepoints returns the savepoints in the bucket, oldest id first.
func (r *Remote) Savepoints(ctx context.Context) ([]*Meta, error) {
	return r.listMetas(ctx, "savepoints/")
}

// FindSavepoint returns the metadata of the savepoint called name;
// ErrNoSuchPoint when the bucket has none.
func (r *Remote) FindSavepoint(ctx context.Context, name string) (*Meta, error) {
	return r.getMeta(ctx, savepointObject(name))
}

// FindCheckpoint returns the metadata of the committed checkpoint id;
// ErrNoSuchPoint when the bucket has none.
func (r *Remote) FindCheckpoint(ctx context.Context, id uint64) (*Meta, error) {
	return r.getMeta(ctx, metaObject(id))
}

func (r *Remote) getMeta(ctx context.Context, name string) (*Meta, error) {
	data, err := r.store.GetBytes(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, ErrNoSuchPoint
	}
	if err != nil {
		return nil, fmt.Errorf("read %s in bucket %s: %w", name, r.Bucket, err)
	}
	m := new(Meta)
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("%s in bucket %s: damaged metadata: %w", name, r.Bucket, err)
	}
	return m, nil
}

// DeleteSavepoint deletes the savepoint called name (its metadata; its
// files go with the next Collect or Retain).
func (r *Remote) DeleteSavepoint(ctx context.Context, name string) error {
	err := r.store.Delete(ctx, savepointObject(name))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return ErrNoSuchPoint
	}
	return err
}

// listMetas lists the metadata objects under prefix. Its requests are
// retried (broker.Retry): a server that takes over on a NATS cluster may
// list while a node goes, and a lost reply must not hold it for the
// caller's whole timeout.
func (r *Remote) listMetas(ctx context.Context, prefix string) ([]*Meta, error) {
	var infos []*jetstream.ObjectInfo
	err := broker.Retry(ctx, broker.RequestAttempt, func(ctx context.Context) (err error) {
		infos, err = r.store.List(ctx)
		return err
	})
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list bucket %s: %w", r.Bucket, err)
	}
	var out []*Meta
	for _, in := range infos {
		if !strings.HasPrefix(in.Name, prefix) || in.Deleted {
			continue
		}
		var data []byte
		err := broker.Retry(ctx, broker.RequestAttempt, func(ctx context.Context) (err error) {
			data, err = r.store.GetBytes(ctx, in.Name)
			return err
		})
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			continue // deleted meanwhile by retention
		}
		if err != nil {
			// Never guess: Collect would take the files of a checkpoint
			// it could not read for leftovers.
			return nil, fmt.Errorf("read %s in bucket %s: %w", in.Name, r.Bucket, err)
		}
		m := new(Meta)
		if err := json.Unmarshal(data, m); err != nil {
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// downloadFloor is the slowest download a file's attempt allows for.
const downloadFloor = 4 << 20 // bytes per second

// downloadAttempt bounds one attempt to download a file of size bytes: a
// request's attempt plus the file at downloadFloor. A lost reply (the
// consumer that reads the file never made) then costs one attempt, not
// the whole download's time.
func downloadAttempt(size int64) time.Duration {
	return broker.RequestAttempt + time.Duration(float64(size)/downloadFloor*float64(time.Second))
}

// Download writes checkpoint m's files and metadata into dir (which must
// not exist yet) and verifies them; it returns the local checkpoint. Each
// file is downloaded again if an attempt times out (broker.Retry).
func (r *Remote) Download(ctx context.Context, m *Meta, dir string) (*Meta, error) {
	tmp := dir + ".downloading"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, err
	}
	for _, f := range m.Files {
		path := filepath.Join(tmp, f.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		err := broker.Retry(ctx, downloadAttempt(f.Size), func(ctx context.Context) error {
			return r.store.GetFile(ctx, fileObject(f), path)
		})
		if err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("download %s of checkpoint %d from bucket %s: %w", f.Name, m.ID, r.Bucket, err)
		}
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := writeMeta(tmp, m); err != nil {
		return nil, err
	}
	if _, err := Verify(tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, err
	}
	return ReadMeta(dir)
}

// DownloadNewest downloads the newest committed checkpoint that is whole
// (every file present and matching its checksum) into parent/chk-<id>;
// nil when the bucket holds none.
func (r *Remote) DownloadNewest(ctx context.Context, parent string) (*Meta, error) {
	metas, err := r.List(ctx)
	if err != nil {
		return nil, err
	}
	var errs []error
	for i := len(metas) - 1; i >= 0; i-- {
		dir := filepath.Join(parent, fmt.Sprintf("chk-%010d", metas[i].ID))
		os.RemoveAll(dir)
		m, err := r.Download(ctx, metas[i], dir)
		if err == nil {
			return m, nil
		}
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("no checkpoint in bucket %s is usable: %w", r.Bucket, errors.Join(errs...))
	}
	return nil, nil
}

// Retain deletes all but the newest keep committed checkpoints, then
// every file object that no remaining checkpoint or savepoint lists
// (including those of uploads cut short). It must not run while an
// upload to the bucket is under way.
func (r *Remote) Retain(ctx context.Context, keep int) error {
	_, err := r.retain(ctx, keep)
	return err
}

// retain is Retain, returning the checkpoints it kept.
func (r *Remote) retain(ctx context.Context, keep int) ([]*Meta, error) {
	metas, err := r.List(ctx)
	if err != nil {
		return nil, err
	}
	keep = max(1, keep)
	if len(metas) > keep {
		for _, m := range metas[:len(metas)-keep] {
			if err := r.store.Delete(ctx, metaObject(m.ID)); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				return nil, err
			}
		}
		metas = metas[len(metas)-keep:]
	}
	return metas, r.Collect(ctx)
}

// Collect deletes every file object that no committed checkpoint or
// savepoint in the bucket lists. Like Retain, it must not run while an
// upload to the bucket is under way (it would take that upload's files
// for leftovers).
func (r *Remote) Collect(ctx context.Context) error {
	metas, err := r.List(ctx)
	if err != nil {
		return err
	}
	sps, err := r.Savepoints(ctx)
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for _, m := range append(metas, sps...) {
		for _, f := range m.Files {
			used[fileObject(f)] = true
		}
	}
	infos, err := r.store.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, in := range infos {
		if strings.HasPrefix(in.Name, "files/") && !in.Deleted && !used[in.Name] {
			if err := r.store.Delete(ctx, in.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				return err
			}
		}
	}
	return nil
}
