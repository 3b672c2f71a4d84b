package store

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Error codes. Every error a Store returns carries one of them; ErrorCode extracts it.
const (
	ECONFLICT    = "conflict"    // the record changed since the base version
	ENOTFOUND    = "not_found"   // no such record, lease or key
	EINVALID     = "invalid"     // bad input: unknown field, wrong type, over a limit, tree rule
	EFORBIDDEN   = "forbidden"   // field ownership does not allow the write
	ELEASE       = "lease"       // someone else's lease holds the record, or our lease is gone
	EBUSY        = "busy"        // a lock could not be had in time; safe to try again later
	EUNAVAILABLE = "unavailable" // the database cannot be reached
	EINTERNAL    = "internal"    // anything else
)

// Error is tandem's general error: a code for programs and a message for people.
type Error struct {
	Code    string
	Message string
	Err     error // optional cause, for errors.Is/As and %+v
	// Ways are what the refused caller can do instead, when the message names them in
	// words, in the message's order; the CLI and the TUI say them in their own terms.
	Ways []Way
}

// Way names what a refused caller can do instead. Store messages say it in words ("run it
// as an editor"); the edges add how (a CLI flag, a TUI key), so store/ never names either.
type Way string

// The ways a store message may point to.
const (
	WayAsEditor      Way = "as_editor"      // write as a person, the editor role
	WayAsSystem      Way = "as_system"      // write as the system role
	WaySubtree       Way = "subtree"        // delete or restore the subtree with the record
	WayExpectVersion Way = "expect_version" // name the version the change was made from
	WayOnSource      Way = "on_source"      // do it on the working copy's source
	WayUser          Way = "user"           // name who is writing
	WayMove          Way = "move"           // move the record rather than set its parent
	WayCloneKind     Way = "clone_kind"     // clone the kind into the working copy too
	WayDestructive   Way = "destructive"    // apply a schema change's destructive changes too
)

// With returns e with ways ws, for a message that names them in words.
func (e *Error) With(ws ...Way) *Error {
	e.Ways = ws
	return e
}

// WaysOf returns the ways out that err's first tandem error names, in its message's order.
func WaysOf(err error) []Way {
	var (
		oe *OwnershipError
		e  *Error
	)
	switch {
	case errors.As(err, &oe):
		switch {
		case oe.ReadOnly && oe.Field == ParentField:
			return []Way{WayMove}
		case oe.ReadOnly:
			return nil
		case oe.Owner == OwnerEditor:
			return []Way{WayAsEditor}
		}
		return []Way{WayAsSystem}
	case errors.As(err, &e):
		return e.Ways
	}
	return nil
}

// Quote puts a value of the caller's input in double quotes, as it is, for an error message.
// Messages are made safe where they are shown (internal/safe escapes a control character
// once, as \x1b); %q would escape it first, and safe would then show that escape doubled
// (\\x1b), as if the input had held a backslash.
func Quote(s string) string { return `"` + s + `"` }

// Errorf returns an *Error with code and a formatted message. A %w verb keeps the cause.
func Errorf(code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Err: errors.Unwrap(err)}
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code of the first tandem error in err's chain: a typed error's own
// code, an *Error's Code, or EINTERNAL for anything else ("" for nil).
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var (
		ce *ConflictError
		le *LeaseError
		oe *OwnershipError
		e  *Error
	)
	switch {
	case errors.As(err, &ce):
		return ECONFLICT
	case errors.As(err, &le):
		return ELEASE
	case errors.As(err, &oe):
		return EFORBIDDEN
	case errors.As(err, &e):
		return e.Code
	}
	return EINTERNAL
}

// ConflictError is returned by a version-checked save whose base version is no longer current.
// It carries the current record and the writes made since the base version, so a caller can
// show who changed what and merge.
type ConflictError struct {
	Kind        Kind
	ID          int64
	BaseVersion int64
	Current     *Record  // the record as it is now
	Since       []Change // the committed writes after BaseVersion, oldest first (may be empty if pruned)
}

// Error says who changed the record, to which version, and which fields.
func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d changed since you loaded version %d: now version %d", e.Kind, e.ID, e.BaseVersion, e.Current.Version)
	if who := e.Actors(); len(who) > 0 {
		fmt.Fprintf(&b, ", by %s", strings.Join(who, ", "))
	} else if e.Current.UpdatedBy != "" {
		fmt.Fprintf(&b, ", by %s", e.Current.UpdatedBy)
	}
	if fs := e.ChangedFields(); len(fs) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(fs, ", "))
	}
	return b.String()
}

// ChangedFields returns the fields written since the base version, in first-written order.
func (e *ConflictError) ChangedFields() []string {
	var out []string
	for _, c := range e.Since {
		for _, f := range c.Fields {
			if !containsString(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// Actors returns who wrote the record since the base version, in first-write order.
func (e *ConflictError) Actors() []string {
	var out []string
	for _, c := range e.Since {
		if c.Actor != "" && !containsString(out, c.Actor) {
			out = append(out, c.Actor)
		}
	}
	return out
}

// LeaseError is returned when a lease stands in the way: a live lease held by someone else
// (Held set, Lost false), or the caller's own lease expired, released or taken over (Lost true).
type LeaseError struct {
	Lease  Lease     // the lease that blocks the write, or the caller's lost lease
	Lost   bool      // the caller presented a token that is no longer valid
	Now    time.Time // the database clock when the check ran
	Reason string    // for a lost lease: "expired", "released" or "taken over by bob"
}

// Error names the holder, since when and until when, in the database's time zone-neutral UTC
// converted to local time for people. A token the store never granted has no group to name.
func (e *LeaseError) Error() string {
	l := e.Lease
	if e.Lost && l.Group == "" {
		return fmt.Sprintf("the lease token given for %s %d is not valid: %s", l.Kind, l.RecordID, e.Reason)
	}
	if e.Lost {
		return fmt.Sprintf("your lease on %s %d (%s) is no longer valid: %s", l.Kind, l.RecordID, l.Group, e.Reason)
	}
	return fmt.Sprintf("%s %d (%s) is held by %s since %s, expires %s", l.Kind, l.RecordID, l.Group,
		l.Holder, clock(l.AcquiredAt), clock(l.ExpiresAt))
}

// UnknownTokenError is the refusal of a write that presents a lease token the store never
// granted (mistyped, forged, or from another store), the same words on every store.
func UnknownTokenError(kind Kind, id int64, now time.Time) *LeaseError {
	return &LeaseError{Lease: Lease{Kind: kind, RecordID: id}, Lost: true, Now: now,
		Reason: "this store never granted it"}
}

func clock(t time.Time) string { return t.Local().Format("15:04") }

// OwnershipError is returned when a writer touches a field its role may not write.
// Its message names the field, its owner and the ways out (seed 000; Kubernetes' field managers).
type OwnershipError struct {
	Kind  Kind
	Field string
	Owner Owner
	Role  Role
	// ReadOnly is set when no role may write the field directly (parent_id: use move).
	ReadOnly bool
}

// Error explains the refusal and what the writer can do instead.
func (e *OwnershipError) Error() string {
	if e.ReadOnly && e.Field == ParentField { // a tree's parent (the schema keeps it readonly)
		return fmt.Sprintf("%s.%s cannot be set directly; move the record instead", e.Kind, e.Field)
	}
	if e.ReadOnly {
		return fmt.Sprintf("%s.%s is read-only: it is written only when the record is created", e.Kind, e.Field)
	}
	way := "leave it to the workers, or run it as the system"
	if e.Owner == OwnerEditor {
		way = "ask a person to edit it, or run it as an editor"
	}
	return fmt.Sprintf("%s.%s is owned by %s and cannot be written as %s: drop the change, or %s",
		e.Kind, e.Field, e.Owner, e.Role, way)
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
