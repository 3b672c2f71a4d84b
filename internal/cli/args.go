package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/store"
)

// exactArgs is cobra.ExactArgs whose error is a usage error naming what is expected.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (got %d arguments)", cmd.Name(), what, len(args))
		}
		return validUTF8(args)
	}
}

// minArgs is cobra.MinimumNArgs whose error is a usage error naming what is expected.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("%s takes %s (got %d arguments)", cmd.Name(), what, len(args))
		}
		return validUTF8(args)
	}
}

// validUTF8 refuses arguments that are not valid UTF-8.
func validUTF8(args []string) error {
	for i, s := range args {
		if !utf8.ValidString(s) {
			return usagef("argument %d is not valid UTF-8", i+1)
		}
	}
	return nil
}

// checkSearch refuses a --search that is not valid UTF-8 or holds a control character:
// either would be folded into something else (U+FFFD, say) and find records the user did
// not ask for.
func checkSearch(s string) error {
	if !utf8.ValidString(s) {
		return usagef("--search is not valid UTF-8")
	}
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		return usagef("--search holds a control character (%U at byte %d)", []rune(s[i:])[0], i)
	}
	return nil
}

// parseKind parses a KIND argument with the kinds of the store --db names (a kind's name or
// its table's: product or products), opening the store: its kinds are its schema's. An
// unknown kind is a usage error naming the store's kinds.
func (a *app) parseKind(ctx context.Context, s string) (store.Kind, error) {
	st, err := a.store(ctx)
	if err != nil {
		return "", err
	}
	k, err := st.Registry().ParseKind(s)
	if err != nil {
		return "", usageErr(err)
	}
	return k, nil
}

// parseID parses a record id argument.
func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%s is not a record id (a positive whole number)", store.Quote(s))
	}
	return id, nil
}

// parseRecordRef parses the KIND ID arguments that name one record: the id first, then the
// kind with the store's kinds (parseKind), which opens the store.
func (a *app) parseRecordRef(ctx context.Context, kind, id string) (store.Kind, int64, error) {
	n, err := parseID(id)
	if err != nil {
		return "", 0, err
	}
	k, err := a.parseKind(ctx, kind)
	if err != nil {
		return "", 0, err
	}
	return k, n, nil
}

// actorRecord is the start of the commands that act on one record as the caller: the
// context carrying the actor (app.actor) and the KIND ID of args[0] and args[1]
// (parseRecordRef). Its errors are theirs.
func (a *app) actorRecord(cmd *cobra.Command, args []string) (context.Context, store.Kind, int64, error) {
	ctx, err := a.actor(cmd.Context())
	if err != nil {
		return nil, "", 0, err
	}
	kind, id, err := a.parseRecordRef(ctx, args[0], args[1])
	if err != nil {
		return nil, "", 0, err
	}
	return ctx, kind, id, nil
}

// parseAssignments parses field=value arguments with the registry's field types. A text
// field given as field=@path reads its value from the file at path (@- for stdin is not
// offered: the CLI is for scripts that have files).
//
// Other fields never read files: their value is the text as given, "@" included (a name may
// well be "@home"). But when that text is @ followed by the name of a file that exists, the
// caller most likely meant to read the file into a field that cannot take one, and saving
// the literal "@notes.txt" would go unnoticed: that is refused (EINVALID, nothing written).
//
// files false (a session of tandem serve, whose files are the server's) reads no file and
// looks at none: field=@path is refused for a text field and is the text itself for others.
func parseAssignments(reg *store.Registry, kind store.Kind, args []string, files bool) (store.Values, error) {
	vals := store.Values{}
	for _, arg := range args {
		if !utf8.ValidString(arg) {
			return nil, usagef("argument is not valid UTF-8")
		}
		name, raw, ok := strings.Cut(arg, "=")
		if !ok {
			return nil, usagef("%s is not field=value", store.Quote(arg))
		}
		name = strings.TrimSpace(name)
		f, err := reg.Field(kind, name)
		if err != nil {
			return nil, usageErr(err)
		}
		if _, dup := vals[name]; dup {
			return nil, usagef("%s is given twice", name)
		}
		if path, at := strings.CutPrefix(raw, "@"); at && !files && f.Type == store.TypeText {
			return nil, usagef("%s=@%s: over SSH no file of the server is read; give the text itself (%s=\"…\") or import it from stdin", name, path, name)
		} else if at && files && (path != "" || f.Type == store.TypeText) {
			if f.Type == store.TypeText {
				b, err := readLimited(path, f.MaxBytes)
				if err != nil {
					return nil, usagef("%s: %v", name, err)
				}
				raw = string(b)
			} else if _, err := os.Stat(path); err == nil {
				return nil, usagef("%s: %s is a file, but only a text field reads its value from a file (field=@path) and %s is a %s; nothing was written (to save the text %s itself, run the command where no file %s exists, or import it)",
					name, path, name, f.Type, store.Quote(raw), path)
			}
		}
		v, err := f.Parse(raw)
		if err != nil {
			return nil, usageErr(err)
		}
		vals[name] = v
	}
	return vals, nil
}

// maxFileValue bounds a value read with field=@path when the field itself sets no
// max_bytes: four times the largest limit of the built-in registry (body, 16 MiB).
const maxFileValue = 64 << 20

// readLimited reads the file at path, refusing one of more than max bytes (0: maxFileValue).
// It reads at most max+1 bytes whatever the file says its size is: devices, pipes and
// process substitutions (/dev/zero, <(...)) report 0 and may never end. A regular file's
// reported size only sizes the buffer, so it is read into memory once.
func readLimited(path string, max int) ([]byte, error) {
	if max <= 0 {
		max = maxFileValue
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := io.LimitReader(f, int64(max)+1)
	var b []byte
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		// bytes.Buffer reads in steps of at least bytes.MinRead: room for one more step
		// past the expected end lets it see EOF without growing.
		size := int(min(fi.Size(), int64(max)))
		buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
		_, err = buf.ReadFrom(r)
		b = buf.Bytes()
	} else {
		b, err = readChunks(r)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > max {
		return nil, fmt.Errorf("%s is over the limit of %d bytes (%s)", path, max, byteSize(max))
	}
	return b, nil
}

// readChunks reads r to its end in chunks of growing size and joins them at the end. A
// buffer that doubles as it fills (bytes.Buffer, io.ReadAll) allocates and touches two to
// four times what it reads, and copies it as often; a source of unknown size read up to
// a 64 MiB limit, /dev/zero or an endless pipe, would take 200 MB of memory to be refused.
// Chunks touch what is read, and once more for the join of what is kept.
func readChunks(r io.Reader) ([]byte, error) {
	var chunks [][]byte
	total, size := 0, 64<<10
	for {
		c := make([]byte, size)
		n, err := io.ReadFull(r, c)
		chunks, total = append(chunks, c[:n]), total+n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
		size = min(2*size, 4<<20)
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	b := make([]byte, 0, total)
	for _, c := range chunks {
		b = append(b, c...)
	}
	return b, nil
}

// byteSize shows a limit in the unit people set it in: "16 MiB", "1 MiB", "512 KiB".
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// parseDelta parses the DELTA of adjust for field f: a whole number, or an amount like
// -1.50 for a money counter.
func parseDelta(f *store.Field, s string) (int64, error) {
	if f.Type == store.TypeMoney {
		n, err := store.ParseMoney(s)
		if err != nil {
			return 0, usagef("%s: %v", f.Name, err)
		}
		return n, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, usagef("%s: %s is not a whole number", f.Name, store.Quote(s))
	}
	return n, nil
}

// parseFlagsWithDelta parses cmd's flags (its own and the inherited global ones) from args
// as cobra would, except that the positional argument number n (0-based) may start with '-':
// adjust's DELTA, as in "adjust product 42 stock -1". That one argument is set aside before
// the flags are parsed and put back among the positional arguments after. Nothing else is
// treated specially: a flag's value is the flag's whatever it looks like (--key -5 is the
// key "-5"), and any other argument starting with '-' is a flag. cmd must have
// DisableFlagParsing set, so that cobra leaves the parsing to RunE.
func parseFlagsWithDelta(cmd *cobra.Command, args []string, n int) ([]string, error) {
	at := dashPositional(cmd, args, n)
	rest := args
	if at >= 0 {
		rest = slices.Delete(slices.Clone(args), at, at+1)
	}
	cmd.DisableFlagParsing = false
	defer func() { cmd.DisableFlagParsing = true }()
	if err := cmd.ParseFlags(rest); err != nil {
		return nil, usageErr(err)
	}
	pos := slices.Clone(cmd.Flags().Args())
	if at >= 0 {
		// dashPositional counted n positional arguments before it, as pflag did.
		pos = slices.Insert(pos, min(n, len(pos)), args[at])
	}
	return pos, nil
}

// dashPositional returns the index in args of positional argument number n if that argument
// starts with '-' and is not one of cmd's flags; else -1. It reads args the way pflag does:
// "--" ends the flags (what follows is positional, -1 included, so nothing need be set
// aside), --name=value and -n=value carry their value, and a flag that takes a value and has
// none attached takes the next argument, whatever it looks like.
func dashPositional(cmd *cobra.Command, args []string, n int) int {
	// known reports whether cmd has the flag named name (a shorthand with short) and
	// whether it takes a value, that is has no value of its own when given alone.
	known := func(name string, short bool) (ok, takesValue bool) {
		for _, inherited := range []bool{false, true} {
			fs := cmd.Flags()
			if inherited {
				fs = cmd.InheritedFlags()
			}
			f := fs.Lookup(name)
			if short {
				f = fs.ShorthandLookup(name)
			}
			if f != nil {
				return true, f.NoOptDefVal == ""
			}
		}
		return false, false
	}
	pos := 0
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "--":
			return -1
		case len(s) < 2 || s[0] != '-':
			pos++
		case s[1] == '-':
			name, _, hasValue := strings.Cut(s[2:], "=")
			if ok, takes := known(name, false); ok && takes && !hasValue {
				i++ // --name VALUE
			}
		default:
			if ok, _ := known(s[1:2], true); !ok && pos == n {
				return i
			}
			// A run of shorthands (-abc); the first that takes a value ends it, with the
			// rest of the run (-kVALUE, -k=VALUE) or the next argument (-k VALUE).
			for j := 1; j < len(s); j++ {
				ok, takes := known(s[j:j+1], true)
				if !ok {
					break // pflag refuses it
				}
				if takes {
					if j == len(s)-1 {
						i++
					}
					break
				}
			}
		}
	}
	return -1
}

// recordWrite is what a command that writes one record starts from: the caller's context
// with the actor, the record named by KIND ID, and the field registry.
type recordWrite struct {
	ctx  context.Context
	kind store.Kind
	id   int64
	reg  *store.Registry
}

// writeTarget is the preamble of every command that writes one record (set, adjust,
// delete), written once: it sets up the actor, opens the store and parses KIND ID with its
// schema, which it returns.
func (a *app) writeTarget(cmd *cobra.Command, kindArg, idArg string) (recordWrite, error) {
	ctx, err := a.actor(cmd.Context())
	if err != nil {
		return recordWrite{}, err
	}
	kind, id, err := a.parseRecordRef(ctx, kindArg, idArg)
	if err != nil {
		return recordWrite{}, err
	}
	return recordWrite{ctx: ctx, kind: kind, id: id, reg: a.st.Registry()}, nil
}

// checkExpectVersion refuses a version-checked command (set, delete) run without
// --expect-version or with a number that is no version.
func checkExpectVersion(cmd *cobra.Command, expect int64, args []string) error {
	if !cmd.Flags().Changed("expect-version") {
		return usagef("%s needs --expect-version N: the version you read (tandem get %s %s)", cmd.Name(), args[0], args[1])
	}
	if expect <= 0 {
		return usagef("--expect-version %d is not a version (versions start at 1)", expect)
	}
	return nil
}
