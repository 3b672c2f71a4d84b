package memory_test

import (
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
	"github.com/tandem-editor/tandem/store/storetest"
)

func open(_ *testing.T, opts store.Options) store.Store { return memory.New(opts) }

func TestDB(t *testing.T) { storetest.Run(t, open) }

func TestDB_Concurrency(t *testing.T) { storetest.RunConcurrency(t, open) }

func TestDB_WorkingCopy(t *testing.T) {
	storetest.RunWorkingCopy(t, func(t *testing.T) store.WorkingCopy {
		db := memory.New(store.Options{})
		t.Cleanup(func() { db.Close() })
		return db
	})
}

func TestDB_Schema(t *testing.T) {
	storetest.RunSchema(t, open)
}
