package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"
)

// TestNextGroup: the writes queued that are not background writes go first and together, in
// queue order; a background write runs alone, once nothing else waits or once it has waited
// backgroundPatience; a write that must run alone stays alone; abandoned writes are dropped.
func TestNextGroup(t *testing.T) {
	now := time.Now()
	db := &DB{}
	bg := db.InBackground(context.Background())
	job := func(name string, ctx context.Context, age time.Duration) *writeJob {
		j := &writeJob{ctx: ctx, queued: now.Add(-age)}
		j.ctx = context.WithValue(j.ctx, nameKey{}, name)
		return j
	}
	fg := context.Background()
	bare := job("bare", fg, 0)
	bare.bare = func(context.Context, *sql.Conn) error { return nil }
	gone := job("gone", fg, 0)
	gone.state.Store(jobAbandoned)
	for _, c := range []struct {
		name        string
		queue       []*writeJob
		group, rest []string
	}{
		{"saves pass a sync's write", []*writeJob{job("ack", bg, 0), job("s1", fg, 0), job("ack2", bg, 0), job("s2", fg, 0)},
			[]string{"s1", "s2"}, []string{"ack", "ack2"}},
		{"a sync's write alone", []*writeJob{job("ack", bg, 0), job("ack2", bg, 0)}, []string{"ack"}, []string{"ack2"}},
		{"a sync's write after its patience", []*writeJob{job("ack", bg, backgroundPatience), job("s1", fg, 0)},
			[]string{"ack"}, []string{"s1"}},
		{"saves then a sync's write in turn", []*writeJob{job("s1", fg, 0), job("ack", bg, 0)}, []string{"s1"}, []string{"ack"}},
		{"a write that runs alone ends the group", []*writeJob{job("s1", fg, 0), bare, job("s2", fg, 0)},
			[]string{"s1"}, []string{"bare", "s2"}},
		{"a write that runs alone first", []*writeJob{bare, job("s1", fg, 0)}, []string{"bare"}, []string{"s1"}},
		{"abandoned ones dropped", []*writeJob{gone, job("ack", bg, 0), gone, job("s1", fg, 0)}, []string{"s1"}, []string{"ack"}},
		{"nothing left", []*writeJob{gone}, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			group, rest := nextGroup(c.queue, now)
			if got := names(group); !slices.Equal(got, c.group) {
				t.Errorf("group %v, want %v", got, c.group)
			}
			if got := names(rest); !slices.Equal(got, c.rest) {
				t.Errorf("rest %v, want %v", got, c.rest)
			}
		})
	}
	// A full group stops at maxGroup; the rest keeps its order.
	var q []*writeJob
	for range maxGroup + 2 {
		q = append(q, job("s", fg, 0))
	}
	if group, rest := nextGroup(q, now); len(group) != maxGroup || len(rest) != 2 || rest[0] != q[maxGroup] {
		t.Errorf("group of %d, rest of %d, want %d and 2", len(group), len(rest), maxGroup)
	}
}

type nameKey struct{}

func names(js []*writeJob) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.ctx.Value(nameKey{}).(string))
	}
	return out
}
