package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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

// parseKind parses a KIND argument (product, products, document, documents).
func parseKind(s string) (store.Kind, error) {
	k, err := store.ParseKind(s)
	if err != nil {
		return "", usageErr(err)
	}
	return k, nil
}

// parseID parses a record id argument.
func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%q is not a record id (a positive whole number)", s)
	}
	return id, nil
}

// parseRecordRef parses the KIND ID arguments that name one record.
func parseRecordRef(kind, id string) (store.Kind, int64, error) {
	k, err := parseKind(kind)
	if err != nil {
		return "", 0, err
	}
	n, err := parseID(id)
	if err != nil {
		return "", 0, err
	}
	return k, n, nil
}

// parseAssignments parses field=value arguments with the registry's field types. A text
// field given as field=@path reads its value from the file at path (@- for stdin is not
// offered: the CLI is for scripts that have files).
func parseAssignments(reg *store.Registry, kind store.Kind, args []string) (store.Values, error) {
	vals := store.Values{}
	for _, arg := range args {
		if !utf8.ValidString(arg) {
			return nil, usagef("argument is not valid UTF-8")
		}
		name, raw, ok := strings.Cut(arg, "=")
		if !ok {
			return nil, usagef("%q is not field=value", arg)
		}
		name = strings.TrimSpace(name)
		f, err := reg.Field(kind, name)
		if err != nil {
			return nil, usageErr(err)
		}
		if _, dup := vals[name]; dup {
			return nil, usagef("%s is given twice", name)
		}
		if f.Type == store.TypeText && strings.HasPrefix(raw, "@") {
			b, err := readLimited(raw[1:], f.MaxBytes)
			if err != nil {
				return nil, usagef("%s: %v", name, err)
			}
			raw = string(b)
		}
		v, err := f.Parse(raw)
		if err != nil {
			return nil, usageErr(err)
		}
		vals[name] = v
	}
	return vals, nil
}

// readLimited reads a file, refusing one larger than max bytes (0: no limit) before reading
// it into memory.
func readLimited(path string, max int) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if max > 0 && fi.Size() > int64(max) {
		return nil, fmt.Errorf("%s has %d bytes, over the limit of %d", path, fi.Size(), max)
	}
	return os.ReadFile(path)
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
		return 0, usagef("%s: %q is not a whole number", f.Name, s)
	}
	return n, nil
}

// negMark stands in for the leading '-' of a negative number while flags are parsed, so that
// "adjust product 42 stock -1" is not read as the flag -1. Arguments cannot contain NUL.
const negMark = "\x00"

// parseFlagsKeepingNegatives parses cmd's flags (its own and the inherited global ones) from
// args, treating arguments like -1 or -2.50 as positional arguments, and returns the
// positional arguments. cmd must have DisableFlagParsing set.
func parseFlagsKeepingNegatives(cmd *cobra.Command, args []string) ([]string, error) {
	munged := make([]string, len(args))
	for i, s := range args {
		if isNegativeNumber(s) {
			s = negMark + s[1:]
		}
		munged[i] = s
	}
	cmd.DisableFlagParsing = false
	defer func() { cmd.DisableFlagParsing = true }()
	if err := cmd.ParseFlags(munged); err != nil {
		return nil, usageErr(err)
	}
	pos := cmd.Flags().Args()
	out := make([]string, len(pos))
	for i, s := range pos {
		if strings.HasPrefix(s, negMark) {
			s = "-" + s[len(negMark):]
		}
		out[i] = s
	}
	return out, nil
}

// isNegativeNumber reports whether s looks like -1 or -2.50.
func isNegativeNumber(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for _, r := range s[1:] {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return s[1] >= '0' && s[1] <= '9'
}
