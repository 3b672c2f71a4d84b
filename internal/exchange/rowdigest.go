package exchange

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/tandem-editor/tandem/internal/jsonenc"
	"github.com/tandem-editor/tandem/store"
)

// rowDigest returns the digest of a row's content: the first 12 bytes, in hex, of the
// SHA-256 of rowDigestJSON(row). Keys of earlier imports hold these digests, and a run of
// the same file again finds its rows by them, so the bytes hashed are exactly
// encoding/json's; they are written without reflection (jsonenc), which made a third of
// the reading of a row.
func rowDigest(row *Row) (string, error) {
	b, err := appendRowJSON(make([]byte, 0, 512), row)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12]), nil
}

// rowDigestJSON is the form rowDigest hashes, as encoding/json makes it.
func rowDigestJSON(row *Row) ([]byte, error) {
	return json.Marshal(struct {
		Kind    store.Kind   `json:"k"`
		ID      int64        `json:"i"`
		Version int64        `json:"v"`
		Set     store.Values `json:"s"`
		Base    store.Values `json:"b"`
		Empty   []string     `json:"e,omitempty"`
	}{row.Kind, row.ID, row.Version, row.Set, row.Base, row.Empty})
}

// appendRowJSON appends rowDigestJSON(row) to dst.
func appendRowJSON(dst []byte, row *Row) ([]byte, error) {
	var err error
	dst = append(dst, `{"k":`...)
	dst = jsonenc.AppendString(dst, string(row.Kind))
	dst = append(dst, `,"i":`...)
	dst = strconv.AppendInt(dst, row.ID, 10)
	dst = append(dst, `,"v":`...)
	dst = strconv.AppendInt(dst, row.Version, 10)
	dst = append(dst, `,"s":`...)
	if dst, err = jsonenc.AppendMap(dst, row.Set); err != nil {
		return nil, err
	}
	dst = append(dst, `,"b":`...)
	if dst, err = jsonenc.AppendMap(dst, row.Base); err != nil {
		return nil, err
	}
	if len(row.Empty) > 0 {
		dst = append(dst, `,"e":`...)
		dst = jsonenc.AppendStrings(dst, row.Empty)
	}
	return append(dst, '}'), nil
}
