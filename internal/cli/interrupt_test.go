package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRun_InterruptedSaysSo: a command stopped by a signal (its context canceled, as main's
// signal handler does) says "interrupted" and what it was doing, never Go's "context
// canceled", and exits with the failure code.
func TestRun_InterruptedSaysSo(t *testing.T) {
	dsn := madeStore(t, "seed")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := Run(ctx, []string{"--db", dsn, "--user", "tester", "export", "products"}, strings.NewReader(""), &out, &errb)
	if code != exitFailure || !strings.HasPrefix(errb.String(), "tandem: interrupted (") || strings.Contains(errb.String(), "context canceled") {
		t.Fatalf("export with its context canceled: exit %d, stderr %q; want %d and \"tandem: interrupted (…)\"", code, errb.String(), exitFailure)
	}
}
