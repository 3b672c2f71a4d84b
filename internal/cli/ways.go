package cli

import (
	"strings"

	"github.com/tandem-editor/tandem/store"
)

// cliWays says, in the CLI's terms, the way out a store error names in words (store.Way):
// store/ never names a flag, the CLI adds it where it prints the error.
var cliWays = map[store.Way]string{
	store.WayAsEditor:      "--as editor",
	store.WayAsSystem:      "--as system",
	store.WaySubtree:       "--subtree",
	store.WayExpectVersion: "--expect-version",
	store.WayOnSource:      "--db SOURCE",
	store.WayUser:          "--user or $TANDEM_USER",
	store.WayMove:          "tandem move",
	store.WayCloneKind:     "tandem clone --kind",
	store.WayDestructive:   "--allow-destructive",
}

// withWays returns msg with the CLI's ways out of err added, when err names any.
func withWays(msg string, err error) string {
	var hows []string
	for _, w := range store.WaysOf(err) {
		if how, ok := cliWays[w]; ok {
			hows = append(hows, how)
		}
	}
	if len(hows) == 0 {
		return msg
	}
	return msg + " (" + strings.Join(hows, ", or ") + ")"
}
