package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// deletedWithScan is how many change-log entries DeletedWith reads back from the log's end
// to find a delete: a restore usually follows its delete closely, and a delete further back
// is still in history, where tandem history shows it.
const deletedWithScan = 20000

// deletedWithPage is how many change-log entries DeletedWith reads at a time.
const deletedWithPage = 500

// DeletedWith returns the documents that the subtree delete of document id removed with it
// and that are still deleted by it, parents before children: the order in which
// RestoreRecord brings each back under its parent (by depth, then id). The delete is id's newest one: id is
// deleted by it now, or was restored right after it. found is false when that delete is not
// among the change log's last deletedWithScan entries (nothing is known then), true
// otherwise, also when id is not deleted at all (then ts is empty).
//
// It needs nothing of a store but its history and change log, so every store answers alike:
// a subtree delete writes one tombstone per document, by one actor at one time, the
// descendants before the top; reading the log back from the top's delete, the documents
// deleted by that actor at that time are its subtree.
func DeletedWith(ctx context.Context, s Store, id int64) (ts []Tombstone, found bool, err error) {
	return TreeDeletedWith(ctx, s, KindDocument, id)
}

// TreeDeletedWith is DeletedWith for the records of any tree kind.
func TreeDeletedWith(ctx context.Context, s Store, kind Kind, id int64) (ts []Tombstone, found bool, err error) {
	hs, err := s.FindHistoryPage(ctx, kind, id, HistoryQuery{Limit: 2}) // the newest two say it all
	if err != nil {
		if ErrorCode(err) == ENOTFOUND {
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("read the history of %s %d: %w", kind, id, err)
	}
	var tomb *Version
	switch {
	case len(hs) > 0 && hs[0].Event == EventDeleted:
		tomb = &hs[0]
	case len(hs) > 1 && hs[0].Event == EventRestored && hs[1].Event == EventDeleted && hs[1].Version == hs[0].Version-1:
		tomb = &hs[1]
	default:
		return nil, true, nil
	}
	pos, err := s.LastChangeID(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("read the change log: %w", err)
	}
	var top *Change
	var members []Change
	stop := false
	for scanned := int64(0); pos > 0 && scanned < deletedWithScan && !stop; {
		from := max(pos-deletedWithPage, 0)
		cs, err := s.Changes(ctx, from, int(pos-from))
		if err != nil {
			return nil, false, fmt.Errorf("read the change log after %d: %w", from, err)
		}
		for i := len(cs) - 1; i >= 0 && !stop; i-- {
			c := cs[i]
			if c.ID > pos {
				continue // past a gap: read in the page before
			}
			switch {
			case top == nil:
				if c.Event == EventDeleted && c.Kind == kind && c.RecordID == id && c.Version == tomb.Version {
					top = &c
				}
			case c.Event == EventDeleted && c.Kind == kind && c.Actor == top.Actor && c.At.Equal(top.At):
				members = append(members, c)
			case c.At.Before(top.At):
				stop = true // before the delete began: nothing of it is further back
			}
		}
		scanned += pos - from
		pos = from
	}
	if top == nil {
		return nil, false, nil
	}
	depth := map[int64]int{id: 0}
	for _, c := range members {
		// The log back from the top holds documents of every depth; those under id are
		// the ones whose tombstone names a parent under id, parents coming first.
		v, err := s.FindVersion(ctx, kind, c.RecordID, c.Version)
		if err != nil {
			return nil, false, fmt.Errorf("read %s %d's tombstone: %w", kind, c.RecordID, err)
		}
		p, ok := v.Snapshot[ParentField].(int64)
		if _, under := depth[p]; !ok || !under {
			continue
		}
		depth[c.RecordID] = depth[p] + 1
		if _, err := s.FindRecord(ctx, kind, c.RecordID); ErrorCode(err) != ENOTFOUND {
			if err != nil {
				return nil, false, fmt.Errorf("read %s %d: %w", kind, c.RecordID, err)
			}
			continue // restored since
		}
		if _, err := s.FindVersion(ctx, kind, c.RecordID, c.Version+1); ErrorCode(err) != ENOTFOUND {
			if err != nil {
				return nil, false, fmt.Errorf("read %s %d's history: %w", kind, c.RecordID, err)
			}
			continue // restored and deleted again since: another delete's
		}
		title := s.Registry().TitleOf(&Record{Kind: kind, Fields: v.Snapshot})
		ts = append(ts, Tombstone{Kind: kind, ID: c.RecordID, Version: c.Version, Title: title})
	}
	slices.SortStableFunc(ts, func(a, b Tombstone) int {
		return cmp.Or(cmp.Compare(depth[a.ID], depth[b.ID]), cmp.Compare(a.ID, b.ID))
	})
	return ts, true, nil
}
