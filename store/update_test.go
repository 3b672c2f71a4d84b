package store

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeUpdateSteps records the steps RunUpdate asks for.
type fakeUpdateSteps struct {
	read     UpdateRead
	replay   *KeyResult
	leaseErr error
	relative *UpdateResult // SaveRelative's answer; nil: matched nothing
	calls    []string
}

func (f *fakeUpdateSteps) call(name string) { f.calls = append(f.calls, name) }

func (f *fakeUpdateSteps) CheckUnique(field, value string) error { f.call("CheckUnique"); return nil }
func (f *fakeUpdateSteps) RecordExists(kind Kind, id int64) (bool, error) {
	f.call("RecordExists")
	return true, nil
}
func (f *fakeUpdateSteps) Read(p *UpdateRequest) (UpdateRead, error) {
	f.call("Read")
	return f.read, nil
}
func (f *fakeUpdateSteps) TakeKey(p *UpdateRequest) (*KeyResult, error) {
	f.call("TakeKey")
	return f.replay, nil
}
func (f *fakeUpdateSteps) Find(id int64) (*Record, error) {
	f.call("Find")
	return &Record{Kind: KindProduct, ID: id, Version: 5}, nil
}
func (f *fakeUpdateSteps) Ancestors(id int64) ([]int64, error) {
	f.call("Ancestors")
	return []int64{id}, nil
}
func (f *fakeUpdateSteps) CheckLeases(id int64, groups []string, token string) error {
	f.call("CheckLeases")
	return f.leaseErr
}
func (f *fakeUpdateSteps) Conflict(id, base int64) error {
	f.call("Conflict")
	return &ConflictError{Kind: KindProduct, ID: id, BaseVersion: base}
}
func (f *fakeUpdateSteps) Write(p *UpdateRequest, cur *Record, plan *SavePlan, done KeyResult) (*UpdateResult, error) {
	f.call("Write")
	if done.Version != cur.Version+1 {
		return nil, errors.New("the key's result is not of the version written")
	}
	return &UpdateResult{Record: cur, Version: done.Version}, nil
}
func (f *fakeUpdateSteps) CompleteKey(p *UpdateRequest, done KeyResult) error {
	f.call("CompleteKey")
	return nil
}

// relativeFake offers the one-statement save.
type relativeFake struct{ *fakeUpdateSteps }

func (f relativeFake) SaveRelative(p *UpdateRequest) (*UpdateResult, error) {
	f.call("SaveRelative")
	return f.relative, nil
}

func TestRunUpdate_Order(t *testing.T) {
	reg := DefaultRegistry()
	ctx := WithActor(context.Background(), Actor{Name: "alice", Role: RoleEditor})
	cur := &Record{Kind: KindProduct, ID: 1, Version: 3, Fields: Values{"stock": int64(10), "name": "a"}}
	for _, tc := range []struct {
		name  string
		u     Update
		steps *fakeUpdateSteps
		want  []string
		code  string
	}{
		{"Write", Update{BaseVersion: 3, Set: Values{"name": "b"}},
			&fakeUpdateSteps{read: UpdateRead{Current: cur}}, []string{"Read", "Write"}, ""},
		{"KeyedWrite", Update{BaseVersion: 3, Set: Values{"name": "b"}, IdempotencyKey: "k"},
			&fakeUpdateSteps{read: UpdateRead{Current: cur, KeyFree: true}}, []string{"Read", "Write"}, ""},
		{"ReplayFirst", Update{BaseVersion: 3, Set: Values{"name": "b"}, IdempotencyKey: "k", LeaseToken: "t"},
			&fakeUpdateSteps{read: UpdateRead{Current: cur, Leased: true}, replay: &KeyResult{Kind: KindProduct, ID: 1, Version: 4},
				leaseErr: Errorf(ELEASE, "held")}, []string{"Read", "TakeKey", "Find"}, ""},
		{"KeyBeforeMissingRecord", Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: "k"},
			&fakeUpdateSteps{}, []string{"Read", "TakeKey"}, ENOTFOUND},
		{"LeaseBeforeVersion", Update{BaseVersion: 2, Set: Values{"name": "b"}},
			&fakeUpdateSteps{read: UpdateRead{Current: cur, Leased: true}, leaseErr: Errorf(ELEASE, "held")},
			[]string{"Read", "CheckLeases"}, ELEASE},
		{"NoLeaseRowNoCheck", Update{BaseVersion: 2, Set: Values{"name": "b"}},
			&fakeUpdateSteps{read: UpdateRead{Current: cur}, leaseErr: Errorf(ELEASE, "held")},
			[]string{"Read", "Conflict"}, ECONFLICT},
		{"UnchangedCompletesKey", Update{BaseVersion: 3, Set: Values{"name": "a"}, IdempotencyKey: "k"},
			&fakeUpdateSteps{read: UpdateRead{Current: cur, KeyFree: true}}, []string{"Read", "Find", "CompleteKey"}, ""},
		{"UniqueChecked", Update{BaseVersion: 3, Set: Values{"sku": "NEW-1"}},
			&fakeUpdateSteps{read: UpdateRead{Current: cur}}, []string{"Read", "CheckUnique", "Write"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := reg.NewUpdateRequest(ctx, KindProduct, 1, tc.u)
			if err != nil {
				t.Fatal(err)
			}
			_, err = reg.RunUpdate(p, tc.steps)
			if ErrorCode(err) != tc.code && !(tc.code == "" && err == nil) {
				t.Errorf("RunUpdate error = %v, want code %q", err, tc.code)
			}
			if !slices.Equal(tc.steps.calls, tc.want) {
				t.Errorf("steps = %v, want %v", tc.steps.calls, tc.want)
			}
		})
	}
}

func TestRunUpdate_OneStatement(t *testing.T) {
	reg := DefaultRegistry()
	sys := WithActor(context.Background(), Actor{Name: "w", Role: RoleSystem})
	ed := WithActor(context.Background(), Actor{Name: "alice", Role: RoleEditor})
	cur := &Record{Kind: KindProduct, ID: 1, Version: 3, Fields: Values{"stock": int64(10)}}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		u    Update
		want bool
	}{
		{"Relative", sys, Update{Add: map[string]int64{"stock": 1}, IdempotencyKey: "k"}, true},
		{"KeepsHistory", ed, Update{Add: map[string]int64{"stock": 1}}, false},
		{"WithoutHistory", WithoutHistory(ed), Update{Add: map[string]int64{"stock": 1}}, true},
		{"Token", sys, Update{Add: map[string]int64{"stock": 1}, LeaseToken: "t"}, false},
		{"Zero", sys, Update{Add: map[string]int64{"stock": 0}}, false},
		{"Base", sys, Update{Add: map[string]int64{"stock": 1}, BaseVersion: 3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := reg.NewUpdateRequest(tc.ctx, KindProduct, 1, tc.u)
			if err != nil {
				t.Fatal(err)
			}
			if p.OneStatement != tc.want {
				t.Errorf("OneStatement = %v, want %v", p.OneStatement, tc.want)
			}
			f := &fakeUpdateSteps{read: UpdateRead{Current: cur, KeyFree: true}, relative: &UpdateResult{Version: 4}}
			if _, err := reg.RunUpdate(p, relativeFake{f}); err != nil {
				t.Fatal(err)
			}
			if got := f.calls[0] == "SaveRelative"; got != tc.want {
				t.Errorf("steps = %v, want the one-statement save first: %v", f.calls, tc.want)
			}
		})
	}
	// A one-statement save that matched nothing leaves the decision to the sequence.
	p, _ := reg.NewUpdateRequest(sys, KindProduct, 1, Update{Add: map[string]int64{"stock": 1}})
	f := &fakeUpdateSteps{read: UpdateRead{Current: cur, Leased: true}, leaseErr: Errorf(ELEASE, "held")}
	if _, err := reg.RunUpdate(p, relativeFake{f}); ErrorCode(err) != ELEASE ||
		strings.Join(f.calls, " ") != "SaveRelative Read CheckLeases" {
		t.Errorf("after a one-statement save that matched nothing: %v, steps %v", err, f.calls)
	}
}

func TestCheckWriteLeases(t *testing.T) {
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	live := Lease{Kind: KindProduct, RecordID: 1, Group: "editor", Holder: "bob", Fence: 2, ExpiresAt: now.Add(time.Minute)}
	mine := &LeaseGrant{Kind: KindProduct, RecordID: 1, Group: "editor", Fence: 2}
	for _, tc := range []struct {
		name  string
		token string
		w     WriteLeases
		code  string
		msg   string
	}{
		{"Free", "", WriteLeases{Now: now}, "", ""},
		{"HeldByOther", "", WriteLeases{Now: now, Others: []Lease{live}}, ELEASE, "held by bob"},
		{"ExpiredOther", "", WriteLeases{Now: now, Others: []Lease{{Group: "editor", ExpiresAt: now}}}, "", ""},
		{"UnknownToken", "t", WriteLeases{Now: now}, ELEASE, "never granted"},
		{"OtherRecord", "t", WriteLeases{Now: now, Grant: &LeaseGrant{Kind: KindProduct, RecordID: 2}}, EINVALID, "belongs to product 2"},
		{"Mine", "t", WriteLeases{Now: now, Grant: mine, Current: &live}, "", ""},
		{"TakenOver", "t", WriteLeases{Now: now, Grant: &LeaseGrant{Kind: KindProduct, RecordID: 1, Group: "editor", Fence: 1}, Current: &live},
			ELEASE, "taken over by bob"},
		{"FirstGroupByName", "", WriteLeases{Now: now, Others: []Lease{{Group: "system", Holder: "w", ExpiresAt: now.Add(time.Hour)}, live}},
			ELEASE, "(editor) is held by bob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckWriteLeases(KindProduct, 1, tc.token, tc.w)
			if ErrorCode(err) != tc.code && !(tc.code == "" && err == nil) {
				t.Fatalf("error = %v, want code %q", err, tc.code)
			}
			if err != nil && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error = %q, want it to say %q", err, tc.msg)
			}
		})
	}
}

// schemaFake offers the store's schema (SchemaReader): stored, at its version.
type schemaFake struct {
	*fakeUpdateSteps
	stored *Registry
}

func (f schemaFake) SchemaVersion() (int64, error) {
	f.call("SchemaVersion")
	return f.stored.Version(), nil
}

func (f schemaFake) StoredSchema(v int64) (*Registry, error) {
	f.call("StoredSchema")
	return f.stored, nil
}

// TestRunUpdate_NewerSchema: a save whose read finds the store's schema newer than the
// registry's is checked against the store's too: a value it refuses is refused with the
// reload message before anything is written, one it allows is written; a save at the
// registry's version does not read the store's schema.
func TestRunUpdate_NewerSchema(t *testing.T) {
	text, err := os.ReadFile("testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	parse := func(s string) *Registry {
		r, err := ParseRegistry("parts.yaml", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	held := parse(string(text)).WithVersion(1)
	stored := parse(strings.Replace(string(text), "max_chars: 32}", "max_chars: 8}", 1)).WithVersion(2)
	ctx := WithActor(context.Background(), Actor{Name: "alice", Role: RoleEditor})
	cur := &Record{Kind: "supplier", ID: 1, Version: 3, Fields: Values{"code": "S1"}}
	for _, tc := range []struct {
		name   string
		schema int64
		code   string
		want   []string
		err    string
	}{
		{"SameVersion", 1, "ABCDEFGHIJKLMNOP", []string{"Read", "CheckUnique", "Write"}, ""},
		{"NewerRefuses", 2, "ABCDEFGHIJKLMNOP", []string{"Read", "StoredSchema"}, EINVALID},
		{"NewerAllows", 2, "SHORT", []string{"Read", "StoredSchema", "CheckUnique", "Write"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := held.NewUpdateRequest(ctx, "supplier", 1, Update{BaseVersion: 3, Set: Values{"code": tc.code}})
			if err != nil {
				t.Fatal(err)
			}
			steps := schemaFake{&fakeUpdateSteps{read: UpdateRead{Current: cur, Schema: tc.schema}}, stored}
			_, err = held.RunUpdate(p, steps)
			if ErrorCode(err) != tc.err && !(tc.err == "" && err == nil) {
				t.Errorf("RunUpdate error = %v, want code %q", err, tc.err)
			}
			if err != nil && !strings.Contains(err.Error(), "the store's schema changed since this client opened it (version 1, now 2") {
				t.Errorf("RunUpdate error = %v, want the reload message", err)
			}
			if !slices.Equal(steps.calls, tc.want) {
				t.Errorf("steps = %v, want %v", steps.calls, tc.want)
			}
		})
	}
}
