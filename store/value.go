package store

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Values maps field names to values. The Go type of each value is fixed by the field's Type
// (see the Type constants); nil means NULL (an unset time or ref).
type Values map[string]any

// Clone returns a copy of v whose sets do not share memory with v's.
func (v Values) Clone() Values {
	out := make(Values, len(v))
	for k, x := range v {
		if s, ok := x.([]string); ok {
			x = slices.Clone(s)
		}
		out[k] = x
	}
	return out
}

// Equal reports whether two values of one field are the same.
func Equal(a, b any) bool {
	switch a := a.(type) {
	case []string:
		b, ok := b.([]string)
		return ok && slices.Equal(a, b)
	case time.Time:
		b, ok := b.(time.Time)
		return ok && a.Equal(b)
	}
	return a == b
}

// Parse converts the text form of a value (as typed on the command line or in a form) into
// the field's Go value, and checks it. Money accepts "29.99", "29.9" and "29"; sets are
// comma-separated; an empty time or ref means nil, and so does "root" for a tree's parent.
func (f *Field) Parse(s string) (any, error) {
	if !utf8.ValidString(s) {
		return nil, Errorf(EINVALID, "%s: not valid UTF-8", f.Name)
	}
	var v any
	switch f.Type {
	case TypeString, TypeText, TypeEnum:
		v = s
	case TypeInt:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, Errorf(EINVALID, "%s: %s is not a whole number", f.Name, Quote(s))
		}
		v = n
	case TypeMoney:
		n, err := ParseMoney(s)
		if err != nil {
			return nil, Errorf(EINVALID, "%s: %v", f.Name, err)
		}
		v = n
	case TypeSet:
		var items []string
		for _, it := range strings.Split(s, ",") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		v = NormalizeSet(items)
	case TypeTime:
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
		if err != nil {
			return nil, Errorf(EINVALID, "%s: %s is not a time like 2026-12-01T10:05:00Z", f.Name, Quote(s))
		}
		v = t.UTC()
	case TypeRef:
		// A tree's parent may be "root"; any other reference is an id, or empty to clear it.
		tree := f.Name == ParentField
		if t := strings.TrimSpace(s); t == "" || t == "null" || (tree && t == "root") {
			return nil, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n <= 0 {
			if tree {
				return nil, Errorf(EINVALID, "%s: %s is not a record id or root", f.Name, Quote(s))
			}
			return nil, Errorf(EINVALID, "%s: %s is not a record id (leave it empty for none)", f.Name, Quote(s))
		}
		v = n
	default:
		return nil, Errorf(EINVALID, "%s: unknown type %s", f.Name, f.Type)
	}
	if err := f.Check(v); err != nil {
		return nil, err
	}
	return v, nil
}

// Check reports whether v is a valid value for the field: the right Go type, valid UTF-8, no
// control characters (text fields allow newline and tab), within the field's limits.
func (f *Field) Check(v any) error {
	bad := func(format string, args ...any) error {
		return Errorf(EINVALID, "%s: %s", f.Name, fmt.Sprintf(format, args...))
	}
	if v == nil {
		switch f.Type {
		case TypeTime, TypeRef:
			return nil
		}
		return bad("cannot be empty (null)")
	}
	switch f.Type {
	case TypeString, TypeText, TypeEnum:
		s, ok := v.(string)
		if !ok {
			return bad("want text, got %T", v)
		}
		if err := checkText(s, f.Type == TypeText); err != nil {
			return bad("%v", err)
		}
		if f.MaxBytes > 0 && len(s) > f.MaxBytes {
			return bad("%d bytes is over the limit of %d", len(s), f.MaxBytes)
		}
		if n := utf8.RuneCountInString(s); f.MaxChars > 0 && n > f.MaxChars {
			return bad("%d characters is over the limit of %d", n, f.MaxChars)
		}
		if f.Type == TypeEnum && !slices.Contains(f.Values, s) {
			return bad("%q is not one of %s", s, strings.Join(f.Values, ", "))
		}
		if f.Required && strings.TrimSpace(s) == "" {
			return bad("cannot be empty")
		}
	case TypeInt, TypeMoney, TypeRef:
		n, ok := v.(int64)
		if !ok {
			return bad("want a whole number, got %T", v)
		}
		if f.Type == TypeMoney && n < 0 {
			return bad("cannot be negative")
		}
		if f.Type == TypeRef && n <= 0 {
			return bad("%d is not a record id", n)
		}
	case TypeSet:
		items, ok := v.([]string)
		if !ok {
			return bad("want a set of strings, got %T", v)
		}
		if f.MaxItems > 0 && len(items) > f.MaxItems {
			return bad("%d items is over the limit of %d", len(items), f.MaxItems)
		}
		for _, it := range items {
			if err := checkText(it, false); err != nil {
				return bad("item %q: %v", it, err)
			}
			if strings.Contains(it, ",") || it == "" || strings.TrimSpace(it) != it {
				return bad("item %q: items are non-empty, without commas or outer spaces", it)
			}
			if n := utf8.RuneCountInString(it); f.MaxChars > 0 && n > f.MaxChars {
				return bad("item of %d characters is over the limit of %d", n, f.MaxChars)
			}
		}
		if !slices.IsSorted(items) || len(slices.Compact(slices.Clone(items))) != len(items) {
			return bad("set is not normalized (sorted, no duplicates)")
		}
	case TypeTime:
		if _, ok := v.(time.Time); !ok {
			return bad("want a time, got %T", v)
		}
	default:
		return bad("unknown type %s", f.Type)
	}
	return nil
}

func checkText(s string, multiline bool) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("not valid UTF-8")
	}
	for _, r := range s {
		if multiline && (r == '\n' || r == '\t' || r == '\r') {
			continue
		}
		if unicode.IsControl(r) {
			return fmt.Errorf("contains the control character %U", r)
		}
	}
	return nil
}

// Format returns the text form of a value, the inverse of Parse: "29.99" for money,
// comma-separated sets, RFC 3339 times, "" for nil.
func (f *Field) Format(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		if f.Type == TypeMoney {
			return FormatMoney(x)
		}
		return strconv.FormatInt(x, 10)
	case []string:
		return strings.Join(x, ",")
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(v)
}

// Export returns v in the form tandem's JSON uses: numbers for ints and refs, a decimal
// string for money ("29.99", exact), arrays for sets, RFC 3339 strings for times.
func (f *Field) Export(v any) any {
	switch x := v.(type) {
	case int64:
		if f.Type == TypeMoney {
			return FormatMoney(x)
		}
	case []string:
		if x == nil {
			return []string{}
		}
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return v
}

// Import converts a value decoded from JSON (string, float64, []any, nil) back into the
// field's Go value and checks it.
func (f *Field) Import(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, f.Check(nil)
	case string:
		if f.Type == TypeSet {
			return nil, Errorf(EINVALID, "%s: want a JSON array", f.Name)
		}
		return f.Parse(x)
	case float64:
		if x != float64(int64(x)) {
			return nil, Errorf(EINVALID, "%s: %v is not a whole number", f.Name, x)
		}
		if f.Type == TypeMoney {
			return nil, Errorf(EINVALID, "%s: write money as a decimal string like \"29.99\"", f.Name)
		}
		n := int64(x)
		return n, f.Check(n)
	case []any:
		items := make([]string, 0, len(x))
		for _, it := range x {
			s, ok := it.(string)
			if !ok {
				return nil, Errorf(EINVALID, "%s: set items must be strings", f.Name)
			}
			items = append(items, s)
		}
		set := NormalizeSet(items)
		return set, f.Check(set)
	}
	return nil, Errorf(EINVALID, "%s: unexpected JSON value %T", f.Name, v)
}

// NormalizeSet sorts items and removes duplicates, returning a non-nil slice.
func NormalizeSet(items []string) []string {
	out := slices.Clone(items)
	if out == nil {
		out = []string{}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ParseMoney parses a decimal amount ("29.99", "-3.5", "7") into integer cents without
// going through floating point. More than two decimals is an error, not a rounding.
func ParseMoney(s string) (int64, error) {
	t := strings.TrimSpace(s)
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimPrefix(strings.TrimPrefix(t, "-"), "+")
	whole, frac, dot := strings.Cut(t, ".")
	if whole == "" && !dot || len(frac) > 2 || (dot && frac == "") {
		return 0, fmt.Errorf("%s is not an amount like 29.99", Quote(s))
	}
	for len(frac) < 2 {
		frac += "0"
	}
	if whole == "" {
		whole = "0"
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("%s is not an amount like 29.99", Quote(s))
		}
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is out of range", Quote(s))
	}
	if neg {
		n = -n
	}
	return n, nil
}

// FormatMoney formats cents as a decimal amount: 2999 is "29.99", -5 is "-0.05".
func FormatMoney(cents int64) string {
	var b [24]byte // "-" and 19 digits and "."
	return string(AppendMoney(b[:0], cents))
}

// AppendMoney appends cents formatted as FormatMoney does to b (no allocation of its own,
// for writers of many amounts such as export).
func AppendMoney(b []byte, cents int64) []byte {
	u := uint64(cents)
	if cents < 0 {
		b, u = append(b, '-'), uint64(-cents)
	}
	b = strconv.AppendUint(b, u/100, 10)
	return append(b, '.', byte('0'+u%100/10), byte('0'+u%10))
}
