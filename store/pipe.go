package store

import "context"

// PipeBatch is how many rows a stream's reading goroutine fills a batch with before it hands
// it over, and PipeBatches how many batches a stream's pipe holds: enough that neither side
// waits for the other while both have work, few enough that memory stays a few hundred rows.
const (
	PipeBatch   = 256
	PipeBatches = 4
)

// Pipe carries batches of rows from a stream's reading goroutine to the caller's, the
// shape every store's RecordStreamer has: the reader fills batches taken from a fixed set
// and sends them; the caller's goroutine consumes each and gives it back. Memory stays the
// set of batches, and reading and consuming run on two cores at once.
type Pipe[B any] struct {
	free, full chan B
}

// RunPipe runs read on a goroutine of its own with a pipe holding bufs, and calls consume on
// the caller's goroutine with each batch read sends, in order. When consume fails, read's
// context is cancelled, the reader's last batches are dropped and consume's error is
// returned; otherwise read's. read must not keep a batch after sending it.
func RunPipe[B any](ctx context.Context, bufs []B, read func(context.Context, *Pipe[B]) error, consume func(B) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &Pipe[B]{free: make(chan B, len(bufs)), full: make(chan B, len(bufs))}
	for _, b := range bufs {
		p.free <- b
	}
	var readErr error
	go func() {
		defer close(p.full)
		readErr = read(ctx, p)
	}()
	for b := range p.full {
		if err := consume(b); err != nil {
			cancel()
			for range p.full { // the reader stops at its next Take or Send
			}
			return err
		}
		p.free <- b // never blocks: free holds every batch not in full or being filled
	}
	return readErr // written before full was closed
}

// Take returns an empty batch to fill, waiting for the consumer to give one back, or ctx's
// error when the stream has ended.
func (p *Pipe[B]) Take(ctx context.Context) (B, error) {
	select {
	case b := <-p.free:
		return b, nil
	case <-ctx.Done():
		var zero B
		return zero, ctx.Err()
	}
}

// Send hands a filled batch to the consumer, or returns ctx's error when the stream has
// ended.
func (p *Pipe[B]) Send(ctx context.Context, b B) error {
	select {
	case p.full <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
