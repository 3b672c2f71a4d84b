package cli

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestCLI_SetConcurrent starts several "set --expect-version V" processes at once for a few
// versions in a row: exactly one wins each round, the others exit 3, and the record holds
// the winner's value at version V+1.
func TestCLI_SetConcurrent(t *testing.T) {
	besideOthers(t)
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			const writers, rounds = 4, 4
			p := mustCreate(t, dsn, "product", "sku=RACE-1", "name=Race", "price=10.00")
			id := fmt.Sprint(p.ID)
			version := p.Version
			for round := range rounds {
				cmds := make([]*exec.Cmd, writers)
				outs := make([]*bytes.Buffer, writers)
				for w := range writers {
					cmds[w] = tandemCmd(dsn, "set", "product", id,
						fmt.Sprintf("name=round %d writer %d", round, w), fmt.Sprintf("price=%d.%02d", round, w),
						"--expect-version", fmt.Sprint(version))
					outs[w] = new(bytes.Buffer)
					cmds[w].Stdout, cmds[w].Stderr = outs[w], outs[w]
				}
				for _, c := range cmds {
					if err := c.Start(); err != nil {
						t.Fatal(err)
					}
				}
				winner, conflicts := -1, 0
				for w, c := range cmds {
					err := c.Wait()
					switch code := c.ProcessState.ExitCode(); {
					case err == nil && winner == -1:
						winner = w
					case err == nil:
						t.Errorf("round %d: writers %d and %d both won version %d", round, winner, w, version)
					case code == exitConflict:
						conflicts++
						if !strings.Contains(outs[w].String(), "changed since you loaded version") {
							t.Errorf("round %d: conflict message does not explain: %s", round, outs[w])
						}
					default:
						t.Errorf("round %d writer %d: exit %d: %s", round, w, code, outs[w])
					}
				}
				if winner < 0 || conflicts != writers-1 {
					t.Fatalf("round %d: winner %d, %d conflicts; want one winner and %d conflicts", round, winner, conflicts, writers-1)
				}
				got := mustGet(t, dsn, "product", p.ID)
				if got.Version != version+1 {
					t.Fatalf("round %d: version %d, want %d", round, got.Version, version+1)
				}
				if want := fmt.Sprintf("round %d writer %d", round, winner); got.Fields["name"] != want {
					t.Errorf("round %d: name %q, want the winner's %q", round, got.Fields["name"], want)
				}
				if want := fmt.Sprintf("%d.%02d", round, winner); got.Fields["price"] != want {
					t.Errorf("round %d: price %q, want the winner's %q", round, got.Fields["price"], want)
				}
				version = got.Version
			}
		})
	}
}
