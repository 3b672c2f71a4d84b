package exchange

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"

	"github.com/tandem-editor/tandem/store"
)

// chunkSize is the span of the file each digest of the first pass covers: a later pass
// holds one chunk back until its digest matches, so no byte reaches the importer unchecked.
const chunkSize = 64 << 10

// errFileChanged is what a later pass's read returns (as a *changedError) when the file's
// bytes are not those the first pass read: someone rewrote, grew or cut the file between or
// during passes.
var errFileChanged = &store.Error{Code: store.EINVALID, Message: "the file changed while it was imported: its bytes are not those the first pass read"}

// changedError is errFileChanged with where the bytes differ.
type changedError struct{ where string }

func (e *changedError) Error() string { return errFileChanged.Message + " (" + e.where + ")" }

func (e *changedError) Unwrap() error { return errFileChanged }

// fileDigest holds the digests of the first pass's bytes, one per chunk.
type fileDigest struct {
	sums [][sha256.Size]byte
	size int64
	done bool
}

// recorder passes the first pass's bytes through, recording a digest of each chunk.
type recorder struct {
	r   io.Reader
	d   *fileDigest
	h   hash.Hash
	in  int // bytes of the current chunk hashed so far
	eof bool
}

func newRecorder(r io.Reader, d *fileDigest) *recorder {
	return &recorder{r: r, d: d, h: sha256.New()}
}

func (c *recorder) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	q := p[:n]
	for len(q) > 0 {
		k := min(len(q), chunkSize-c.in)
		c.h.Write(q[:k])
		c.in += k
		q = q[k:]
		if c.in == chunkSize {
			c.seal()
		}
	}
	c.d.size += int64(n)
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}

// seal records the digest of the current chunk and starts the next.
func (c *recorder) seal() {
	var s [sha256.Size]byte
	c.h.Sum(s[:0])
	c.d.sums = append(c.d.sums, s)
	c.h.Reset()
	c.in = 0
}

// finish reads what the reader of the rows left unread (bytes after a JSON array's end) and
// records the last chunk's digest: the digest then covers the whole file.
func (c *recorder) finish() error {
	if !c.eof {
		if _, err := io.Copy(io.Discard, c); err != nil {
			return fmt.Errorf("read the file: %w", err)
		}
	}
	if c.in > 0 {
		c.seal()
	}
	c.d.done = true
	return nil
}

// verifier serves a later pass's bytes a chunk at a time, each only once its digest matches
// the first pass's; otherwise (or when the file is longer or shorter) its reads return
// errFileChanged, with nothing of the differing chunk served.
type verifier struct {
	r    io.Reader
	d    *fileDigest
	buf  []byte
	rest []byte // checked bytes not yet served
	i    int    // the next chunk
	err  error
}

func newVerifier(r io.Reader, d *fileDigest) *verifier {
	return &verifier{r: r, d: d}
}

func (v *verifier) Read(p []byte) (int, error) {
	if len(v.rest) == 0 && v.err == nil {
		v.err = v.fill()
	}
	if len(v.rest) > 0 {
		n := copy(p, v.rest)
		v.rest = v.rest[n:]
		return n, nil
	}
	return 0, v.err
}

// fill reads and checks the next chunk.
func (v *verifier) fill() error {
	if v.buf == nil {
		v.buf = make([]byte, chunkSize)
	}
	n, err := io.ReadFull(v.r, v.buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return err
	}
	if n == 0 {
		if v.i != len(v.d.sums) {
			return &changedError{fmt.Sprintf("it is shorter now: %d bytes, where the first pass read %d", int64(v.i)*chunkSize, v.d.size)}
		}
		return io.EOF
	}
	if v.i >= len(v.d.sums) || sha256.Sum256(v.buf[:n]) != v.d.sums[v.i] {
		return &changedError{fmt.Sprintf("they differ within bytes %d to %d", int64(v.i)*chunkSize+1, int64(v.i)*chunkSize+int64(n))}
	}
	v.i++
	v.rest = v.buf[:n]
	return nil
}
