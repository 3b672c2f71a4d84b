package store

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// SKUs are compared by their key, decided here, once, for every store: two SKUs whose keys
// are equal are the same SKU, however they were typed. Each store keeps the key in a column
// with a UNIQUE index (products.sku_key), so that two concurrent creates of "ABC-1" and
// "abc-1 " cannot both win, and writes the key on every path that writes a sku.

// SKUKey returns the key a sku is compared by: invisible characters removed (non-breaking
// spaces, zero-width spaces and joiners, the byte-order mark, soft hyphens, bidi marks: every
// format character), then Unicode NFKC normalisation (so "ＡＢＣ" is "ABC"), case folding,
// NFKC again (folding may undo it), and surrounding white space trimmed.
func SKUKey(sku string) string {
	if l, ok := asciiLower(sku); ok {
		// ASCII alone: nothing invisible, its own NFKC form, folded to lower case (as in
		// SearchFold); only the trimming is left.
		return strings.TrimFunc(l, unicode.IsSpace)
	}
	return skuKeyUnicode(sku)
}

// skuKeyUnicode is SKUKey through Unicode's tables, for a sku of any characters.
func skuKeyUnicode(sku string) string {
	s := strings.Map(func(r rune) rune {
		if invisibleInSKU(r) {
			return -1
		}
		return r
	}, sku)
	s = norm.NFKC.String(s)
	s = cases.Fold().String(s)
	s = norm.NFKC.String(s)
	return strings.TrimFunc(s, unicode.IsSpace)
}

// invisibleInSKU reports the characters a sku key drops: the non-breaking spaces (which look
// like a space but are no separator a person would type on purpose) and every format
// character (category Cf: zero-width space, joiners, word joiner, BOM, soft hyphen, bidi
// marks), which look like nothing at all.
func invisibleInSKU(r rune) bool {
	switch r {
	case '\u00a0', '\u2007', '\u202f':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// SKUKeySeparator joins a key and a product id in the key of a product whose sku collided
// with an older product's when the keys were first computed (migration 3). It is a format
// character, which SKUKey removes, so no key of a sku typed later can end that way: the
// older product keeps its sku and its key; the newer one keeps its sku, and a write of a
// new sku gives it a proper key.
const SKUKeySeparator = "\u2063"

// CheckUniqueValue applies the rules of a unique field's value (a sku) that a field's own
// limits cannot express: a value whose key is empty (only spaces and invisible characters)
// is no value.
func CheckUniqueValue(field, value string) error {
	if SKUKey(value) == "" {
		return Errorf(EINVALID, "%s: %s has no visible characters", field, quoteSKU(value))
	}
	return nil
}

// DuplicateKeyError is the refusal of a value of a unique field of kind whose key another
// record, other, already has with otherValue.
func DuplicateKeyError(kind Kind, field, value string, other int64, otherValue string) error {
	if value == otherValue {
		return Errorf(EINVALID, "%s %s already exists (%s %d)", field, quoteSKU(value), kind, other)
	}
	return Errorf(EINVALID, "%s %s already exists (%s %d has %s; values that differ only in case, "+
		"surrounding spaces, width, non-breaking or zero-width characters are the same %s)",
		field, quoteSKU(value), kind, other, quoteSKU(otherValue), field)
}

// quoteSKU shows a sku with its invisible characters named (U+200B as <U+200B>), in quotes
// when it has any, or spaces or other non-ASCII characters, so the message shows why two
// SKUs that look alike are the same one. It writes no backslash escapes: the message is
// made safe for a terminal where it is shown (internal/safe), which would show a backslash
// of this text doubled, and escapes control characters itself.
func quoteSKU(s string) string {
	plain := true
	for _, r := range s {
		if invisibleInSKU(r) || unicode.IsSpace(r) || r > unicode.MaxASCII {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if invisibleInSKU(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
		} else {
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
