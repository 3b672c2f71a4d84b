package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Schema changes as real processes: `tandem schema apply` runs while other tandem processes
// save, while another apply runs, and under a process that opened the store before it.
//
// What a writer may see when the schema changes under it, and nothing else: its command
// succeeds (exit 0), or, when the process read the schema before the change and saves a
// field the change renamed or dropped, it fails with exit 2 and the reload message
// (reloadMessage: "the store's schema changed since this client opened it …; open the store
// again"), having written nothing; a process started after the change is refused the old
// field's name like any unknown field (exit 2, "unknown field KIND.FIELD").

// reloadMessage is what a save made against an older schema says when it cannot apply.
const reloadMessage = "the store's schema changed since this client opened it"

// partsStore returns a new store of b made with store/testdata/parts.yaml.
func partsStore(t *testing.T, b backend) string {
	t.Helper()
	parts, err := filepath.Abs("../../store/testdata/parts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dsn := filepath.Join(t.TempDir(), "parts.db")
	if b.name != "sqlite" {
		dsn = b.dsn(t)
	}
	mustTandem(t, dsn, "init", "--schema", parts)
	return dsn
}

// schemaFile writes the store's schema, as schema show prints it, with each edits[i]
// replaced by edits[i+1], to a new file and returns its path.
func schemaFile(t *testing.T, dsn string, edits ...string) string {
	t.Helper()
	s := mustInProcess(t, dsn, "schema", "show")
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			t.Fatalf("%q is not in the store's schema:\n%s", edits[i], s)
		}
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	return writeFile(t, "schema.yaml", s)
}

// Lines of the parts schema as schema show prints them, to edit.
const (
	shownCode   = "      - {name: code, label: code, type: string, owner: editor, rule: scalar, group: editor, required: true, unique: true, max_chars: 32}\n"
	shownRating = "      - {name: rating, label: rating, type: int, owner: shared, rule: counter, group: editor, default: \"0\"}\n"
	shownNotes  = "      - {name: notes, label: notes, type: text, owner: editor, rule: text, group: editor, search: true}\n"
	shownStatus = "values: [draft, active, retired]"
	shownArea   = "  area:\n"
)

// runTandem runs tandem with args against dsn to its end, from any goroutine.
func runTandem(dsn string, args ...string) (result, error) {
	cmd := tandemCmd(dsn, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return result{out.String(), errb.String(), ee.ExitCode()}, nil
	}
	return result{out.String(), errb.String(), 0}, err
}

// applyWriter is one writer process after another, saving a custom kind as a person or a
// script would: a set of its own supplier (version-checked), an adjust of the shared hot
// supplier's counter, a create of a part. It remembers what was acknowledged (exit 0).
type applyWriter struct {
	n, hot   int64
	dsn      string
	supplier int64  // its own supplier
	version  int64  // the supplier's version after its last acknowledged set
	field    string // the field it sets: notes, then name once notes is dropped
	value    string // what its last acknowledged set of field wrote
	notes    string // what its last acknowledged set of notes wrote
	counter  string // the hot supplier's counter: rating, then score once renamed
	adjusts  int64  // acknowledged adjusts
	parts    map[int64]string
	reloads  int
	done     atomic.Int64 // commands run
	errs     []string
}

// run saves until stop is closed.
func (w *applyWriter) run(stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		w.step(i)
		w.done.Add(1)
	}
}

func (w *applyWriter) step(i int) {
	switch i % 3 {
	case 0:
		val := fmt.Sprintf("w%d-%d", w.n, i)
		field := w.field
		r, err := runTandem(w.dsn, "set", "supplier", fmt.Sprint(w.supplier), field+"="+val, "--expect-version", fmt.Sprint(w.version), "--json")
		if !w.ok("set "+field, r, err, &w.field, "name") {
			if w.field != field {
				w.value = "" // nothing acknowledged of the next field yet
			}
		} else {
			var rec record
			if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
				w.errs = append(w.errs, fmt.Sprintf("set --json: %v: %s", err, r.stdout))
				return
			}
			w.version, w.value = rec.Version, val
			if w.field == "notes" {
				w.notes = val
			}
		}
	case 1:
		r, err := runTandem(w.dsn, "adjust", "supplier", fmt.Sprint(w.hot), w.counter, "1")
		if w.ok("adjust "+w.counter, r, err, &w.counter, "score") {
			w.adjusts++
		}
	case 2:
		label := fmt.Sprintf("w%d-%d", w.n, i)
		r, err := runTandem(w.dsn, "create", "part", "label="+label, "--json")
		if w.ok("create part", r, err, nil, "") {
			var rec record
			if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
				w.errs = append(w.errs, fmt.Sprintf("create --json: %v: %s", err, r.stdout))
				return
			}
			w.parts[rec.ID] = label
		}
	}
}

// ok reports whether r is an acknowledged write. A reload message is counted; a refusal of
// *field as an unknown field (dropped or renamed by the change) makes the writer use next
// from then on; anything else is an error.
func (w *applyWriter) ok(what string, r result, err error, field *string, next string) bool {
	switch {
	case err != nil:
		w.errs = append(w.errs, fmt.Sprintf("writer %d: %s: %v", w.n, what, err))
	case r.code == 0:
		return true
	case r.code == exitUsage && strings.Contains(r.stderr, reloadMessage) && strings.Contains(r.stderr, "open the store again"):
		w.reloads++
	case field != nil && r.code == exitUsage && strings.Contains(r.stderr, "unknown field supplier."+*field+" "):
		*field = next
	default:
		w.errs = append(w.errs, fmt.Sprintf("writer %d: %s: exit %d\n%s%s", w.n, what, r.code, r.stdout, r.stderr))
	}
	return false
}

// writers are four applyWriters of one store.
type writers struct {
	t    *testing.T
	ws   []*applyWriter
	stop chan struct{}
	wg   sync.WaitGroup
}

func newWriters(t *testing.T, dsn string) *writers {
	t.Helper()
	hot := mustCreate(t, dsn, "supplier", "code=HOT", "name=Hot supplier")
	ws := &writers{t: t}
	for n := range 4 {
		s := mustCreate(t, dsn, "supplier", fmt.Sprintf("code=W%d", n), fmt.Sprintf("name=Writer %d", n))
		ws.ws = append(ws.ws, &applyWriter{n: int64(n), hot: hot.ID, dsn: dsn, supplier: s.ID, version: s.Version,
			field: "notes", counter: "rating", parts: map[int64]string{}})
	}
	return ws
}

// start starts the writers.
func (ws *writers) start() {
	ws.stop = make(chan struct{})
	for _, w := range ws.ws {
		ws.wg.Add(1)
		go func() { defer ws.wg.Done(); w.run(ws.stop) }()
	}
}

// progress waits until every writer has run n more commands.
func (ws *writers) progress(n int64) {
	ws.t.Helper()
	want := make([]int64, len(ws.ws))
	for i, w := range ws.ws {
		want[i] = w.done.Load() + n
	}
	for i, w := range ws.ws {
		for w.done.Load() < want[i] {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// halt stops the writers and fails the test on any error they saw.
func (ws *writers) halt() {
	ws.t.Helper()
	close(ws.stop)
	ws.wg.Wait()
	reloads := 0
	for _, w := range ws.ws {
		reloads += w.reloads
		for _, e := range w.errs[:min(len(w.errs), 3)] {
			ws.t.Error(e)
		}
		w.errs = nil
	}
	ws.t.Logf("writers: %d reload messages", reloads)
}

// check verifies that nothing acknowledged was lost: every adjust counted once, in the
// counter field (whichever name it has now), every writer's supplier at the version and
// value of its last acknowledged set, every acknowledged part there, and no other.
func (ws *writers) check(dsn string) {
	t := ws.t
	t.Helper()
	var adjusts int64
	parts := map[int64]string{}
	for _, w := range ws.ws {
		adjusts += w.adjusts
		for id, l := range w.parts {
			parts[id] = l
		}
		got := mustGet(t, dsn, "supplier", w.supplier)
		if got.Version != w.version || (w.value != "" && got.Fields[w.field] != w.value) {
			t.Errorf("writer %d's supplier = version %d %v; want version %d with %s %q", w.n, got.Version, got.Fields, w.version, w.field, w.value)
		}
	}
	hot := mustGet(t, dsn, "supplier", ws.ws[0].hot)
	counter := ws.ws[0].counter
	if got := hot.Fields[counter]; got != float64(adjusts) {
		t.Errorf("hot supplier's %s = %v, want %d (the acknowledged adjusts)", counter, got, adjusts)
	}
	var list []record
	if err := json.Unmarshal([]byte(mustInProcess(t, dsn, "list", "parts", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != len(parts) {
		t.Errorf("%d parts, want the %d acknowledged creates", len(list), len(parts))
	}
	for _, p := range list {
		if parts[p.ID] != p.Fields["label"] {
			t.Errorf("part %d = %v, want label %q", p.ID, p.Fields, parts[p.ID])
		}
	}
}

// mustApply runs schema apply with args and checks it made the store's schema version v.
func mustApply(t *testing.T, dsn string, v int64, args ...string) string {
	t.Helper()
	out := mustTandem(t, dsn, append([]string{"schema", "apply"}, args...)...)
	if !strings.Contains(out, fmt.Sprintf("the store's schema is now version %d\n", v)) {
		t.Fatalf("schema apply %v said %q, want version %d", args, out, v)
	}
	return out
}

// TestCLI_SchemaApplyWhileWriting: four writer processes save a custom kind (set, adjust,
// create) while schema apply, as processes, makes additive changes (a new field with a
// default, a new kind, a new enum value, a wider limit), then drops a field they set
// (refused with its count, then applied with the export), then renames the counter they
// adjust. Nothing acknowledged is lost: every adjust counted exactly, also across the
// rename; every acknowledged set there, or, for the dropped field, in the export file;
// every acknowledged create there. A writer sees at most the reload message; the new
// schema is usable at once; history keeps the counter's versions under its new name.
func TestCLI_SchemaApplyWhileWriting(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { testSchemaApplyWhileWriting(t, b) })
	}
}

func testSchemaApplyWhileWriting(t *testing.T, b backend) {
	between := int64(1) // commands each writer runs between two applies
	if longTests() {
		between = 6
	}
	dsn := partsStore(t, b)
	ws := newWriters(t, dsn)
	// Additive changes, one apply each, while the writers save.
	additive := [][]string{
		{shownNotes, shownNotes + "      - {name: country, type: string, owner: editor, rule: scalar, default: DE}\n"},
		{shownArea, "  bin:\n    table: bins\n    title: name\n    fields:\n      - {name: name, type: string, owner: editor, rule: scalar, required: true}\n" + shownArea},
		{shownStatus, "values: [draft, active, retired, obsolete]"},
		{shownCode, strings.Replace(shownCode, "max_chars: 32", "max_chars: 64", 1)},
	}
	ws.start()
	ws.progress(between)
	for i, edit := range additive {
		mustApply(t, dsn, int64(i+2), schemaFile(t, dsn, edit...))
		ws.progress(between)
	}
	ws.halt()
	ws.check(dsn)
	if t.Failed() {
		return
	}
	hot := ws.ws[0].hot
	for _, w := range ws.ws {
		if got := mustGet(t, dsn, "supplier", w.supplier); got.Fields["country"] != "DE" {
			t.Errorf("writer %d's supplier after the new field: %v, want country DE", w.n, got.Fields)
		}
	}
	h := mustGet(t, dsn, "supplier", hot)
	long := strings.Repeat("X", 60)
	mustTandem(t, dsn, "set", "supplier", fmt.Sprint(hot), "country=FR", "code="+long, "--expect-version", fmt.Sprint(h.Version))
	mustTandem(t, dsn, "create", "bin", "name=Shelf 1")
	p := mustCreate(t, dsn, "part", "label=Obsolete one")
	mustTandem(t, dsn, "set", "part", fmt.Sprint(p.ID), "status=obsolete", "--expect-version", "1")
	if got := mustGet(t, dsn, "supplier", hot); got.Fields["country"] != "FR" || got.Fields["code"] != long {
		t.Errorf("hot supplier after saving the new field and the wider code: %v", got.Fields)
	}
	mustTandem(t, dsn, "delete", "part", fmt.Sprint(p.ID), "--expect-version", "2") // check counts the writers' parts

	// A destructive change: notes dropped. Refused with its count, nothing written; then
	// applied, with the values it drops exported, while the writers set notes.
	withNotes := 0
	for _, w := range ws.ws {
		if w.notes != "" {
			withNotes++
		}
	}
	drop := schemaFile(t, dsn, shownNotes, "")
	r := tandem(t, dsn, "schema", "apply", drop)
	want := fmt.Sprintf("drop field supplier.notes: destructive: %d records hold a value", withNotes)
	wantExit(t, "apply of a dropped field", r, exitUsage, want, "schema change refused")
	if out := mustInProcess(t, dsn, "schema", "show"); !strings.HasPrefix(out, "# schema version 5 ") {
		t.Fatalf("a refused apply changed the schema:\n%s", out)
	}
	lost := filepath.Join(t.TempDir(), "lost.jsonl")
	ws.start()
	ws.progress(between)
	out := mustApply(t, dsn, 6, drop, "--allow-destructive", "--export", lost)
	ws.progress(between + 3) // three commands started after the apply: one of them a set of notes
	ws.halt()
	ws.check(dsn)
	exported := readLost(t, lost)
	if !strings.Contains(out, plural(len(exported), "dropped value")+" written to ") {
		t.Errorf("destructive apply said %q; the export holds %d values", out, len(exported))
	}
	for _, w := range ws.ws {
		if w.field != "name" {
			t.Errorf("writer %d still sets %s after notes was dropped", w.n, w.field)
		}
		if got := exported[fmt.Sprintf("supplier %d notes", w.supplier)]; got != w.notes {
			t.Errorf("export of writer %d's notes = %q, want its last acknowledged %q", w.n, got, w.notes)
		}
	}

	// A rename (rename_from) of the counter the writers adjust, while they adjust it.
	rename := schemaFile(t, dsn, shownRating, strings.Replace(shownRating, "{name: rating, label: rating,", "{name: score, rename_from: rating,", 1))
	ws.start()
	ws.progress(between)
	mustApply(t, dsn, 7, rename)
	ws.progress(between + 3) // three commands started after the apply: one of them an adjust
	ws.halt()
	ws.check(dsn)
	var total int64
	for _, w := range ws.ws {
		total += w.adjusts
		if w.counter != "score" {
			t.Errorf("writer %d still adjusts %s after the rename", w.n, w.counter)
		}
	}
	hist := mustInProcess(t, dsn, "history", "supplier", fmt.Sprint(hot), "--json", "--all")
	if strings.Contains(hist, `"rating"`) {
		t.Errorf("history of the hot supplier still names rating:\n%s", hist)
	}
	var hv struct {
		Versions []struct {
			Fields   []string       `json:"fields"`
			Snapshot map[string]any `json:"snapshot"`
		} `json:"versions"`
	}
	if err := json.Unmarshal([]byte(hist), &hv); err != nil {
		t.Fatal(err)
	}
	var adjusted int64
	for _, v := range hv.Versions {
		if len(v.Fields) == 1 && v.Fields[0] == "score" {
			adjusted++
		}
	}
	if adjusted != total {
		t.Errorf("history of the hot supplier has %d versions that wrote score, want the %d acknowledged adjusts", adjusted, total)
	}
}

// readLost reads an export file of schema apply into "kind id field" -> value.
func readLost(t *testing.T, path string) map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]any{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Kind  string `json:"kind"`
			ID    int64  `json:"id"`
			Field string `json:"field"`
			Value any    `json:"value"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		out[fmt.Sprintf("%s %d %s", l.Kind, l.ID, l.Field)] = l.Value
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCLI_SchemaApplyTwoAtOnce: two schema apply processes started together never
// interleave. Of two files that each add another field, exactly one applies; the other is
// refused, as a change made against the version that is gone (exit 3) or as one that
// would drop the field the first added (exit 2); the store's schema is then the first
// file's. Of two applies of the same file, one applies and the other finds nothing to do or
// is refused (exit 3).
func TestCLI_SchemaApplyTwoAtOnce(t *testing.T) {
	besideOthers(t)
	rounds := 2
	if longTests() {
		rounds = 8
	}
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := partsStore(t, b)
			mustCreate(t, dsn, "supplier", "code=S1", "name=One")
			v := int64(1)
			for i := range rounds {
				fa, fb := fmt.Sprintf("alpha%d", i), fmt.Sprintf("beta%d", i)
				line := func(name string) string {
					return shownNotes + "      - {name: " + name + ", type: int, owner: editor, rule: scalar, default: 7}\n"
				}
				a, b2 := schemaFile(t, dsn, shownNotes, line(fa)), schemaFile(t, dsn, shownNotes, line(fb))
				if i%2 == 1 {
					b2 = a // the same file twice
				}
				rs := applyTogether(t, dsn, a, b2)
				v++
				var won []int
				for j, r := range rs {
					switch {
					case r.code == 0 && strings.Contains(r.stdout, fmt.Sprintf("now version %d\n", v)):
						won = append(won, j)
					case r.code == 0 && a == b2 && strings.Contains(r.stdout, fmt.Sprintf("no change: the file is the store's schema version %d", v)):
					case r.code == exitConflict && strings.Contains(r.stderr, fmt.Sprintf("the store's schema is version %d now", v)):
					case r.code == exitUsage && a != b2 && strings.Contains(r.stderr, "schema change refused") && strings.Contains(r.stderr, "drop field supplier."):
					default:
						t.Errorf("round %d, apply %d: exit %d\n%s%s", i, j, r.code, r.stdout, r.stderr)
					}
				}
				if len(won) != 1 {
					t.Fatalf("round %d: %d applies applied, want exactly one:\n%+v", i, len(won), rs)
				}
				show := mustInProcess(t, dsn, "schema", "show")
				if !strings.HasPrefix(show, fmt.Sprintf("# schema version %d ", v)) {
					t.Fatalf("round %d: schema after two applies:\n%s", i, show)
				}
				winner, loser := fa, fb
				if won[0] == 1 && a != b2 {
					winner, loser = fb, fa
				}
				if !strings.Contains(show, "{name: "+winner+",") || (a != b2 && strings.Contains(show, "{name: "+loser+",")) {
					t.Errorf("round %d: the schema holds not just the winner's field %s:\n%s", i, winner, show)
				}
				if got := mustGet(t, dsn, "supplier", 1); got.Fields[winner] != float64(7) {
					t.Errorf("round %d: supplier 1 = %v, want %s 7", i, got.Fields, winner)
				}
			}
		})
	}
}

// applyTogether starts schema apply of each file at once and returns what each did.
func applyTogether(t *testing.T, dsn string, files ...string) []result {
	t.Helper()
	rs := make([]result, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := runTandem(dsn, "schema", "apply", f)
			if err != nil {
				r.code, r.stderr = -1, err.Error()
			}
			rs[i] = r
		}()
	}
	wg.Wait()
	return rs
}

// pausedSet starts "tandem set KIND ID FIELD=@fifo", a process that opens the store, reads
// its schema and then waits for the value of a text field from a fifo, and returns once it
// waits there: release writes the value and returns what the process did.
func pausedSet(t *testing.T, dsn, kind string, id, version int64, field string) (release func(value string) result) {
	t.Helper()
	return pausedTandem(t, dsn, func(fifo string) []string {
		return []string{"set", kind, fmt.Sprint(id), field + "=@" + fifo, "--expect-version", fmt.Sprint(version)}
	})
}

// pausedTandem is pausedSet for any command: args returns its arguments, one of which reads
// a value from the file fifo.
func pausedTandem(t *testing.T, dsn string, args func(fifo string) []string) (release func(value string) result) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "value")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := tandemCmd(dsn, args(fifo)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	code := func(err error) int {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("tandem %v: %v", cmd.Args[1:], err)
		}
		return 0
	}
	// Opening the fifo to write without blocking fails (ENXIO) until the process opened it
	// to read: by then it has opened the store and parsed the other arguments with its schema.
	var w *os.File
	for w == nil {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		switch {
		case err == nil:
			w = f
		case errors.Is(err, syscall.ENXIO):
			select {
			case err := <-exited:
				t.Fatalf("tandem %v ended before it read the value: exit %d\n%s%s", cmd.Args[1:], code(err), out.String(), errb.String())
			case <-time.After(5 * time.Millisecond):
			}
		default:
			t.Fatal(err)
		}
	}
	return func(value string) result {
		t.Helper()
		if _, err := w.WriteString(value); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		c := code(<-exited)
		return result{out.String(), errb.String(), c}
	}
}

// TestCLI_SchemaApplyOldClient: a process that opened the store and read its schema before
// a schema change saves after it. After an additive change its save applies (the record has
// its value and the new field's default); after a rename of another field, or of the field
// it saves, its save fails with exit 2 and the reload message, and writes nothing; run
// again, the command is refused the old name, and the new name saves. Then (testOldClientNarrowed)
// a narrowed limit, a removed enum value and a dropped field: what the new schema refuses is
// refused the same way, what it allows is saved.
func TestCLI_SchemaApplyOldClient(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := partsStore(t, b)
			s := mustCreate(t, dsn, "supplier", "code=S1", "name=One", "notes=first")

			release := pausedSet(t, dsn, "supplier", s.ID, 1, "notes")
			mustApply(t, dsn, 2, schemaFile(t, dsn, shownNotes, shownNotes+"      - {name: country, type: string, owner: editor, rule: scalar, default: DE}\n"))
			if r := release("after the new field"); r.code != 0 {
				t.Fatalf("a save of a client opened before an additive change: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			got := mustGet(t, dsn, "supplier", s.ID)
			if got.Version != 2 || got.Fields["notes"] != "after the new field" || got.Fields["country"] != "DE" {
				t.Errorf("after the old client's save: version %d %v", got.Version, got.Fields)
			}

			// Another field renamed: the old client's save reads it under its old name. (On
			// SQLite a double-quoted name that no column has was read as a string literal:
			// the save failed on "rating" being a string, or, had the field been text, read
			// the field's old name as its value.)
			release = pausedSet(t, dsn, "supplier", s.ID, 2, "notes")
			mustApply(t, dsn, 3, schemaFile(t, dsn, shownRating, strings.Replace(shownRating, "{name: rating, label: rating,", "{name: score, rename_from: rating,", 1)))
			r := release("after another field's rename")
			wantExit(t, "a save by a client opened before another field's rename", r, exitUsage, reloadMessage, "open the store again")
			if got := mustGet(t, dsn, "supplier", s.ID); got.Version != 2 || got.Fields["notes"] != "after the new field" {
				t.Errorf("after the refused save: version %d %v", got.Version, got.Fields)
			}

			release = pausedSet(t, dsn, "supplier", s.ID, 2, "notes")
			mustApply(t, dsn, 4, schemaFile(t, dsn, shownNotes, strings.Replace(shownNotes, "{name: notes, label: notes,", "{name: remarks, rename_from: notes,", 1)))
			r = release("after the rename")
			wantExit(t, "a save of a renamed field by a client opened before the rename", r, exitUsage, reloadMessage, "open the store again")
			if strings.Count(r.stderr, "\n") > 1 || regexp.MustCompile(`[\x00-\x08\x0b-\x1f]`).MatchString(r.stderr) {
				t.Errorf("the reload message is not one clean line: %q", r.stderr)
			}
			got = mustGet(t, dsn, "supplier", s.ID)
			if got.Version != 2 || got.Fields["remarks"] != "after the new field" {
				t.Errorf("after the refused save: version %d %v", got.Version, got.Fields)
			}
			wantExit(t, "the old name, run again", tandem(t, dsn, "set", "supplier", fmt.Sprint(s.ID), "notes=x", "--expect-version", "2"),
				exitUsage, "unknown field supplier.notes")
			mustTandem(t, dsn, "set", "supplier", fmt.Sprint(s.ID), "remarks=x", "--expect-version", "2")

			testOldClientNarrowed(t, dsn, s.ID)
		})
	}
}

// testOldClientNarrowed continues TestCLI_SchemaApplyOldClient on supplier id (version 3,
// fields code, name, score, remarks) with the changes that write no column of a save: a
// narrowed limit and a removed enum value, then a dropped field. A save or create of the
// old client that the new schema refuses gets the reload message and writes nothing; one
// it still allows applies. The old client is paused reading a text field's value (only a
// text field reads one from a file); the value the change concerns is an argument it checked
// against the schema it read before the change.
func testOldClientNarrowed(t *testing.T, dsn string, id int64) {
	t.Helper()
	mustApply(t, dsn, 5, schemaFile(t, dsn, shownArea, "      - {name: memo, type: text, owner: editor, rule: text}\n"+shownArea))
	part := mustCreate(t, dsn, "part", "label=P1")
	paused := func(args ...string) func(string) result {
		return pausedTandem(t, dsn, func(fifo string) []string {
			out := slices.Clone(args)
			for i := range out {
				out[i] = strings.ReplaceAll(out[i], "FIFO", fifo)
			}
			return out
		})
	}

	// max_chars of code narrowed from 32 to 8.
	long := paused("set", "supplier", fmt.Sprint(id), "code=ABCDEFGHIJKLMNOP", "remarks=@FIFO", "--expect-version", "3")
	short := paused("set", "supplier", fmt.Sprint(id), "code=SHORT", "remarks=@FIFO", "--expect-version", "3")
	destructive := func() []string {
		return []string{"--allow-destructive", "--export", filepath.Join(t.TempDir(), "lost.jsonl")}
	}
	mustApply(t, dsn, 6, append([]string{schemaFile(t, dsn, "max_chars: 32}", "max_chars: 8}")}, destructive()...)...)
	r := long("long")
	wantExit(t, "a save of a 16-character code by a client opened before max_chars became 8", r, exitUsage, reloadMessage, "open the store again")
	if got := mustGet(t, dsn, "supplier", id); got.Version != 3 || got.Fields["code"] != "S1" {
		t.Errorf("after the refused save: version %d %v", got.Version, got.Fields)
	}
	if r := short("short"); r.code != 0 {
		t.Fatalf("a save of a code the narrowed limit allows: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := mustGet(t, dsn, "supplier", id); got.Version != 4 || got.Fields["code"] != "SHORT" || got.Fields["remarks"] != "short" {
		t.Errorf("after the allowed save: version %d %v", got.Version, got.Fields)
	}

	// retired removed from part.status.
	pid := fmt.Sprint(part.ID)
	retired := paused("set", "part", pid, "status=retired", "memo=@FIFO", "--expect-version", "1")
	created := paused("create", "part", "label=P2", "status=retired", "memo=@FIFO")
	active := paused("set", "part", pid, "status=active", "memo=@FIFO", "--expect-version", "1")
	mustApply(t, dsn, 7, append([]string{schemaFile(t, dsn, shownStatus, "values: [draft, active]")}, destructive()...)...)
	r = retired("retired")
	wantExit(t, "a save of a removed enum value by a client opened before", r, exitUsage, reloadMessage, "open the store again")
	r = created("created")
	wantExit(t, "a create with a removed enum value by a client opened before", r, exitUsage, reloadMessage, "open the store again")
	if r := active("active"); r.code != 0 {
		t.Fatalf("a save of an enum value the new schema keeps: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := mustGet(t, dsn, "part", part.ID); got.Version != 2 || got.Fields["status"] != "active" || got.Fields["memo"] != "active" {
		t.Errorf("after the allowed save: version %d %v", got.Version, got.Fields)
	}
	if out := mustTandem(t, dsn, "list", "part", "--json"); strings.Contains(out, "P2") || strings.Contains(out, "retired") {
		t.Errorf("the refused create wrote a part: %s", out)
	}

	// remarks dropped from supplier: a save of another of its fields reads the record's
	// columns as they were, so it is refused too; a save of another kind applies.
	name := paused("set", "supplier", fmt.Sprint(id), "name=Renamed", "remarks=@FIFO", "--expect-version", "4")
	label := paused("set", "part", pid, "label=P1b", "memo=@FIFO", "--expect-version", "2")
	shown := mustInProcess(t, dsn, "schema", "show")
	var kept []string
	for _, line := range strings.SplitAfter(shown, "\n") {
		if !strings.Contains(line, "{name: remarks,") {
			kept = append(kept, line)
		}
	}
	mustApply(t, dsn, 8, append([]string{writeFile(t, "dropped.yaml", strings.Join(kept, ""))}, destructive()...)...)
	r = name("dropped")
	wantExit(t, "a save by a client opened before a field of its kind was dropped", r, exitUsage, reloadMessage, "open the store again")
	if got := mustGet(t, dsn, "supplier", id); got.Version != 4 || got.Fields["name"] != "One" {
		t.Errorf("after the refused save: version %d %v", got.Version, got.Fields)
	}
	if r := label("label"); r.code != 0 {
		t.Fatalf("a save of another kind after a field was dropped: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := mustGet(t, dsn, "part", part.ID); got.Version != 3 || got.Fields["label"] != "P1b" {
		t.Errorf("after the other kind's save: version %d %v", got.Version, got.Fields)
	}
}
