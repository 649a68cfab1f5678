package sql

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"streamdb/catalog"
	"streamdb/meta"
	"streamdb/sqlerr"
)

// Secret values are stored encrypted (catalog.Secret.Sealed) with
// AES-256-GCM under one key per server, kept in a file outside the state
// directory: <data dir>/secret.key, made with mode 0600 at the first
// start, or the file --secret-key-file names (which must exist). The
// state, and so every checkpoint and savepoint, holds only ciphertext and
// the key's fingerprint, so a copy of them reveals no secret; ROLLBACK TO
// and restarts read the values back with the same key. A server that
// restores another's state (an --ha-group standby taking over, a
// --restore-from on another machine) needs that server's key, through
// --secret-key-file: a value sealed under another key is an error naming
// both ways out (the right key, or ALTER SECRET).

// secretKeyAAD binds a sealed value to its use, so that ciphertext made
// for something else under the same key is refused.
const secretKeyAAD = "streamdb secret v1"

// secretBox seals and opens secret values with the server's key.
type secretBox struct {
	aead cipher.AEAD
	id   string // fingerprint of the key: stored with each sealed value
	path string
}

// openSecretBox reads the key file at path, making one when it does not
// exist and was not given (--secret-key-file).
func openSecretBox(path string, given bool) (*secretBox, error) {
	key, err := meta.ReadSecretKey(path, given)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append([]byte("streamdb secret key id\x00"), key...))
	return &secretBox{aead: aead, id: hex.EncodeToString(sum[:8]), path: path}, nil
}

// seal encrypts value under a fresh random nonce.
func (b *secretBox) seal(value string) (*catalog.Secret, error) {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(value)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return &catalog.Secret{Sealed: b.aead.Seal(nonce, nonce, []byte(value), []byte(secretKeyAAD)), Key: b.id}, nil
}

// open returns the value of secret name.
func (b *secretBox) open(name string, s *catalog.Secret) (string, error) {
	if s.Sealed == nil {
		return s.Value, nil // stored before values were encrypted
	}
	if s.Key != b.id {
		return "", sqlerr.New(sqlerr.ConfigFileError, "secret %s was encrypted with another key (fingerprint %s) than this server's (%s, in %s)", name, s.Key, b.id, b.path).
			WithHint("Start the server with --secret-key-file naming the key file of the server that stored it, or set it again with ALTER SECRET %s AS '...'.", name)
	}
	n := b.aead.NonceSize()
	if len(s.Sealed) < n {
		return "", sqlerr.New(sqlerr.DataCorrupted, "secret %s is damaged", name).WithHint("Set it again with ALTER SECRET %s AS '...'.", name)
	}
	plain, err := b.aead.Open(nil, s.Sealed[:n], s.Sealed[n:], []byte(secretKeyAAD))
	if err != nil {
		return "", sqlerr.New(sqlerr.DataCorrupted, "secret %s is damaged: it does not decrypt with the key it names", name).
			WithHint("Set it again with ALTER SECRET %s AS '...'.", name)
	}
	return string(plain), nil
}

// openSecrets reads the server's secret key and encrypts the secrets
// stored before values were encrypted. Called at open, after the catalog
// is loaded and before any session starts.
func (e *Engine) openSecrets() error {
	path, given := e.node.SecretKeyPath()
	box, err := openSecretBox(path, given)
	if err != nil {
		return err
	}
	e.secrets = box
	var errs []error
	for _, d := range e.objects(catalog.KindSecret) {
		if d.Secret == nil || d.Secret.Sealed != nil {
			continue
		}
		sealed, err := box.seal(d.Secret.Value)
		if err == nil {
			next := *d
			next.Secret = sealed
			err = e.replaceDescriptor(d, &next)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("encrypt secret %s: %w", d.Name, err))
		}
	}
	return errors.Join(errs...)
}

// secretValue returns the value of secret name.
func (e *Engine) secretValue(name string) (string, error) {
	d, err := e.secret(name)
	if err != nil {
		return "", err
	}
	return e.secrets.open(name, d.Secret)
}
