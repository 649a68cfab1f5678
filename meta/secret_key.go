package meta

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"streamdb/storage"
)

// ReadSecretKey reads the server's 256-bit key of CREATE SECRET values
// from the file at path (64 hexadecimal digits), making one with mode
// 0600 when it does not exist and was not given (--secret-key-file).
// The file lives outside the state directory, so that no checkpoint or
// savepoint holds it.
func ReadSecretKey(path string, given bool) ([]byte, error) {
	data, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err) && given:
		return nil, fmt.Errorf("secret key file %s (--secret-key-file) does not exist: give the key file of the server whose state this is, or make a new key with `openssl rand -hex 32 > %s` (secrets stored under another key then need ALTER SECRET)", path, path)
	case os.IsNotExist(err):
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		data = []byte(hex.EncodeToString(key) + "\n")
		if err := storage.WriteFileSynced(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("make secret key file %s: %w", path, err)
		}
	case err != nil:
		return nil, fmt.Errorf("read secret key file %s: %w", path, err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("secret key file %s must hold a 256-bit key as 64 hexadecimal digits (such as `openssl rand -hex 32` prints)", path)
	}
	return key, nil
}
