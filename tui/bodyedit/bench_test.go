package bodyedit

import (
	"strings"
	"testing"
)

// BenchmarkKeystroke measures one printable key (Update) plus View at 80x24 with the cursor in
// the middle of the text. The goal is a 20,000-line cost under twice the 100-line cost.
func BenchmarkKeystroke(b *testing.B) {
	mib := SampleText(1)
	for n := 1; len(mib) < 1<<20; n *= 2 {
		mib = SampleText(n * 1024)
	}
	mib = mib[:1<<20]
	for _, c := range []struct {
		name string
		text string
	}{
		{"lines=100", SampleText(100)},
		{"lines=1000", SampleText(1000)},
		{"lines=20000", SampleText(20000)},
		{"size=1MiB", mib},
		{"size=1MiB/one-line", strings.ReplaceAll(mib, "\n", " ")},
	} {
		b.Run(c.name, func(b *testing.B) {
			k := newKeystrokeBench(c.text)
			b.ReportAllocs()
			for b.Loop() {
				k.step()
			}
		})
	}
}

func TestBenchKeystroke(t *testing.T) {
	if d := BenchKeystroke(100, 10); d <= 0 {
		t.Errorf("BenchKeystroke(100, 10) = %v, want a positive duration", d)
	}
	k := newKeystrokeBench(SampleText(101))
	before := k.m.Value()
	for range 200 {
		k.step()
	}
	// The bench types into the middle line and resets it every 64 keys: the text stays the
	// same size and only that line differs.
	if got, want := k.m.LineCount(), 102; got != want {
		t.Errorf("LineCount() = %d after typing, want %d", got, want)
	}
	if got := k.m.Value(); len(got) > len(before)+64 {
		t.Errorf("the text grew by %d bytes over 200 keys", len(got)-len(before))
	}
}
