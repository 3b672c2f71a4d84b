package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/tandem-editor/tandem/internal/safe"
	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/sync/live"
)

// jsonFollow is one line of tandem sync --follow --json: the syncer's state when it changed.
type jsonFollow struct {
	Online       bool   `json:"online"`
	OfflineSince string `json:"offline_since,omitempty"`
	SyncedAt     string `json:"synced_at,omitempty"`
	Pending      int    `json:"pending"`
	Conflicts    int    `json:"conflicts"`
	Waits        int    `json:"waits"`
	Pushes       int    `json:"pushes"`
	Error        string `json:"error,omitempty"`
}

// followSync is tandem sync --follow: the background syncer of --local (sync/live) without
// the TUI, until ctx ends. It prints a line each time the state changes.
func (a *app) followSync(ctx context.Context, source string, repush, asJSON bool) error {
	if repush {
		return usagef("--follow cannot go with --repush: run tandem sync --repush once, then --follow")
	}
	wc, st, err := a.workingCopy(ctx)
	if err != nil {
		return err
	}
	if ro, ok := wc.(interface{ ReadOnly() string }); ok && ro.ReadOnly() != "" {
		return usagef("%s is read-only (%s): nothing was pulled or pushed", safe.Line(a.dsn), ro.ReadOnly())
	}
	if source == "" {
		source = st.Source
		if a.local != nil {
			source = a.local.source // as given, with the password it may hold (memory only)
		}
	}
	if err := checkDSNAs("--source", source); err != nil {
		return err
	}
	lock := a.syncLockPath()
	reg := wc.Registry()
	changed := make(chan struct{}, 1)
	s := live.New(wc, live.Options{
		Open: func(ctx context.Context) (store.Store, error) {
			return openStore(ctx, source, store.Options{Registry: reg})
		},
		Lock: func() (func(), bool, error) { return lockFile(lock, "sync") },
		Notify: func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	go s.Run(ctx)
	var last jsonFollow
	for {
		select {
		case <-ctx.Done():
			<-s.Done()
			return nil
		case <-s.Done():
			return nil
		case <-changed:
		}
		stt := s.Status()
		j := jsonFollow{Online: stt.Online, Pending: stt.Pending, Conflicts: stt.Conflicts, Waits: stt.Waits,
			Pushes: stt.PushSeq, Error: redact(stt.Err)}
		if !stt.OfflineSince.IsZero() {
			j.OfflineSince = formatTime(stt.OfflineSince)
		}
		cmp := j
		if j == last {
			continue
		}
		last = cmp
		if !stt.SyncedAt.IsZero() {
			j.SyncedAt = formatTime(stt.SyncedAt)
		}
		if asJSON {
			err = writeJSONLine(a.stdout, j)
		} else {
			err = writeFollowLine(a, stt)
		}
		if err == nil {
			err = a.flush()
		}
		if err != nil {
			return fmt.Errorf("sync --follow: write: %w", err)
		}
	}
}

// writeFollowLine prints the syncer's state for people.
func writeFollowLine(a *app, s live.Status) error {
	var line string
	if s.Online {
		line = fmt.Sprintf("online · synced %s · %d pending · %s", s.SyncedAt.Local().Format(time.TimeOnly), s.Pending, plural(s.Conflicts, "conflict"))
	} else {
		line = fmt.Sprintf("offline since %s · %d pending · %s: %s", s.OfflineSince.Local().Format(time.TimeOnly), s.Pending,
			plural(s.Conflicts, "conflict"), safe.Line(redact(s.Err)))
	}
	_, err := fmt.Fprintln(a.stdout, line)
	return err
}
