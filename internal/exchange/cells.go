package exchange

import "github.com/tandem-editor/tandem/store"

// A spreadsheet takes a cell that starts with =, +, -, @, a tab or a carriage return for a
// formula and runs it (=HYPERLINK(...), DDE's +cmd|' /C calc'!A0). A CSV export therefore
// writes such a text cell with a single quote in front, as OWASP's CSV injection guidance
// says: spreadsheets show the cell as text, without the quote. Import takes that quote off
// again. To make export then import the identity for every string, a cell that starts
// with quotes followed by a trigger ('=x, ''-5) gets one quote more as well, and import
// takes one quote off exactly the cells that start with quotes followed by a trigger.
// Numbers, money, ids, references and times are never touched: only cells of text, string,
// enum and set fields (and updated_by) are.

// defusable reports whether f's cells are text that export defuses and import restores.
func defusable(f *store.Field) bool {
	switch f.Type {
	case store.TypeString, store.TypeText, store.TypeEnum, store.TypeSet:
		return true
	}
	return false
}

// formulaTrigger reports whether a cell starting with c is read as a formula.
func formulaTrigger(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// needsDefusing reports whether a text cell is written with a quote in front: it starts
// with a formula trigger, or with quotes followed by one.
func needsDefusing[T string | []byte](cell T) bool {
	i := 0
	for i < len(cell) && cell[i] == '\'' {
		i++
	}
	return i < len(cell) && formulaTrigger(cell[i])
}

// defuse returns the cell as export writes it.
func defuse(cell string) string {
	if needsDefusing(cell) {
		return "'" + cell
	}
	return cell
}

// appendDefused defuses the cell that b holds from start on, in place.
func appendDefused(b []byte, start int) []byte {
	if !needsDefusing(b[start:]) {
		return b
	}
	b = append(b, 0)
	copy(b[start+1:], b[start:])
	b[start] = '\''
	return b
}

// undefuse returns the text of a cell that export defused: one quote less on a cell that
// starts with quotes followed by a formula trigger; any other cell as it is.
func undefuse(cell string) string {
	if len(cell) > 0 && cell[0] == '\'' && needsDefusing(cell) {
		return cell[1:]
	}
	return cell
}
