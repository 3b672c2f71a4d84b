package exchange

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tandem-editor/tandem/store"
	"github.com/tandem-editor/tandem/store/memory"
)

// TestExport_CSVKeepsCR: text with CRLF, a lone CR and a CR at the end survives a CSV export
// and import byte for byte (encoding/csv's reader turns a quoted CRLF into LF).
func TestExport_CSVKeepsCR(t *testing.T) {
	texts := []string{"line one\r\nline two\r\n", "a\rb", "ends with CR\r", "\r\n", "mixed\nLF\r\nCRLF"}
	src := memory.New(store.Options{})
	for i, text := range texts {
		if _, err := src.CreateRecord(as(t, alice), store.KindProduct, store.Values{
			"sku": "CR-" + itoa(i), "name": "n", "description": text,
		}); err != nil {
			t.Fatal(err)
		}
	}
	out := mustExport(t, src, store.KindProduct, CSV, WriterOptions{})
	if !bytes.Contains(out, []byte("\"line one\r\nline two\r\n\"")) {
		t.Fatalf("export does not hold the text as it is, quoted:\n%q", out)
	}
	dst := memory.New(store.Options{})
	_, sum := mustImport(t, as(t, alice), dst, out, CSV, ImportOptions{})
	if sum[Created] != len(texts) {
		t.Fatalf("import: %v, want %d created", sum, len(texts))
	}
	for i, want := range texts {
		r, err := dst.FindRecord(t.Context(), store.KindProduct, int64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Fields["description"]; got != want {
			t.Errorf("description of product %d after the round trip: %q, want %q", i+1, got, want)
		}
	}
	if again := mustExport(t, dst, store.KindProduct, CSV, WriterOptions{}); normalize(again) != normalize(out) {
		t.Errorf("export → import → export differs:\n%s", firstDiff(normalize(again), normalize(out)))
	}
}

// csvAll reads every record of data with read, and the start line of each, up to the first
// error.
func csvAll(read func() ([]string, int, error)) (recs [][]string, lines []int, err error) {
	for {
		rec, line, err := read()
		if err == io.EOF {
			return recs, lines, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && errors.Is(err, csv.ErrFieldCount) {
				recs, lines = append(recs, rec), append(lines, line)
				continue
			}
			return recs, lines, err
		}
		recs, lines = append(recs, rec), append(lines, line)
	}
}

// sameAsEncodingCSV fails when csvReader reads data otherwise than encoding/csv: the same
// records, start lines and errors. data must hold no CR inside quotes, where they differ.
func sameAsEncodingCSV(t *testing.T, data string) {
	t.Helper()
	std := csv.NewReader(strings.NewReader(data))
	wantRecs, wantLines, wantErr := csvAll(func() ([]string, int, error) {
		rec, err := std.Read()
		line := 0
		if rec != nil {
			line, _ = std.FieldPos(0)
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) && errors.Is(err, csv.ErrFieldCount) {
			line = pe.StartLine
		}
		return rec, line, err
	})
	gotRecs, gotLines, gotErr := csvAll(newCSVReader(strings.NewReader(data)).Read)
	if strings.Join(flat(gotRecs), "|") != strings.Join(flat(wantRecs), "|") || len(gotRecs) != len(wantRecs) {
		t.Errorf("%q: records %q, encoding/csv %q", data, gotRecs, wantRecs)
	}
	if fmtInts(gotLines) != fmtInts(wantLines) {
		t.Errorf("%q: start lines %v, encoding/csv %v", data, gotLines, wantLines)
	}
	var gpe, wpe *csv.ParseError
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && (!errors.As(gotErr, &gpe) || !errors.As(wantErr, &wpe) ||
		!errors.Is(gotErr, wpe.Err) || gpe.Line != wpe.Line) {
		t.Errorf("%q: error %v, encoding/csv %v", data, gotErr, wantErr)
	}
}

func flat(recs [][]string) []string {
	var out []string
	for _, r := range recs {
		out = append(out, strings.Join(r, "\x00"))
	}
	return out
}

func fmtInts(ns []int) string {
	var b strings.Builder
	for i, n := range ns {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(itoa(n))
	}
	return b.String()
}

// csvCases are inputs csvReader reads as encoding/csv does.
var csvCases = []string{
	"", "\n", "a,b\n", "a,b", "a,b\r\n1,2\r\n", "a,b\n\n\n1,2\n", "a,,\n,,\n", "a,b\n1,\n",
	`a,"b,c"` + "\n", `"a""b",c` + "\n", "\"multi\nline\",x\n", "\"\",\"\"\n", "a,b\n1,2,3\n4,5\n",
	"a,b\n1\n", `a,b"c` + "\n", `"a"b,c` + "\n", "\"open,x\n", "a,b\n\"x\"\r\n", "a\rb,c\n", " a , b \n",
	"a,b\n\"1\n2\n3\",4\n5,6\n", "\"a\"", "a,\"\"\"\"\n", "x\n\"y\" \n",
}

func TestCSVReader_AsEncodingCSV(t *testing.T) {
	for _, c := range csvCases {
		sameAsEncodingCSV(t, c)
	}
}

// FuzzCSVReader: on any input with no CR, csvReader reads what encoding/csv reads.
func FuzzCSVReader(f *testing.F) {
	for _, c := range csvCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data string) {
		if strings.Contains(data, "\r") {
			t.Skip("CR is where the two readers differ on purpose")
		}
		sameAsEncodingCSV(t, data)
	})
}

// BenchmarkCSVRead reads an export of 2,000 sample products with csvReader and, for
// comparison, with encoding/csv.
func BenchmarkCSVRead(b *testing.B) {
	st := memory.New(store.Options{})
	mustProducts(b, st, 2000)
	data := mustExport(b, st, store.KindProduct, CSV, WriterOptions{})
	b.Run("csvReader", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, _, err := csvAll(newCSVReader(bytes.NewReader(data)).Read); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_csv", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := csv.NewReader(bytes.NewReader(data)).ReadAll(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadAll reads an export of 2,000 sample products in each format, as import does
// before it writes (parsing, type checks, duplicate-key checks, digests).
func BenchmarkReadAll(b *testing.B) {
	st := memory.New(store.Options{})
	mustProducts(b, st, 2000)
	for _, f := range []Format{CSV, JSONL, JSON} {
		data := mustExport(b, st, store.KindProduct, f, WriterOptions{})
		b.Run(string(f), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				x, err := NewReader(bytes.NewReader(data), f, st.Registry())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ReadAll(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLoneSurrogate: a \u escape naming half of a surrogate pair is found wherever it stands
// in a string, a whole pair and escaped backslashes are not.
func TestLoneSurrogate(t *testing.T) {
	for in, want := range map[string]int{
		`{"name":"a\ud800b"}`:         10,
		`{"name":"a\udc00"}`:          10,
		`{"name":"\ud83d\ude00"}`:     -1, // 😀 as a pair
		`{"name":"\\ud800"}`:          -1, // a backslash, then the text ud800
		`{"name":"\\\ud800"}`:         11,
		`{"name":"\ud83d\u0041"}`:     9, // high half, then not a low half
		`{"name":"plain","id":"\n"}`:  -1,
		`{"name":"é\u00e9","x":"\""}`: -1,
	} {
		if got := loneSurrogate([]byte(in)); got != want {
			t.Errorf("loneSurrogate(%s) = %d, want %d", in, got, want)
		}
	}
}
