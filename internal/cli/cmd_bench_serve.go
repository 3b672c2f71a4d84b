package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tandem-editor/tandem/internal/serve"
	"github.com/tandem-editor/tandem/store"
)

func newBenchServeCmd(a *app) *cobra.Command {
	var (
		cfg    serve.BenchConfig
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Editor sessions over SSH typing and saving: keystroke latency, save fan-out, memory",
		Long: `serve starts tandem serve in this process on 127.0.0.1, on a new SQLite store in a
temporary directory with one product per session and a user and key per session, and
connects --sessions SSH clients with terminals (golang.org/x/crypto/ssh) from this
process. Each session moves to its own product, then --rounds times: watches the list
for up to --dwell, opens its product, empties the name, types a new one a key at a time
(--think between keys), saves it (Ctrl-S, until "saved v…" shows) and goes back to the
list. It prints:

  keystroke   time from a key written to the first output holding its echo (p50, p99)
  seen        time from a save's Ctrl-S to its new name in the output of each other
              session that had the list on screen (p50, p99, max); missed counts those
              that had it on screen for a second and never showed it
  memory      the process's resident memory growth (server and clients) and the Go
              heap's growth, per session, while all are open
  lost        products whose final name and version are not their last save's (must be 0)

Targets: keystroke p99 under 50 ms, every save seen within 1 s, 0 lost, under 20 MB per
session. The machine's load before and after is printed too: on a shared machine the
figures include the neighbours.`,
		Example: `  tandem bench serve --sessions 50
  tandem bench serve --sessions 10 --rounds 3 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Sessions < 2 || cfg.Sessions > 512 || cfg.Rounds < 1 || cfg.Rounds > 64 || cfg.Dwell < 10*time.Millisecond || cfg.Think < 0 {
				return usagef("--sessions must be 2..512, --rounds 1..64, --dwell at least 10ms, --think not negative")
			}
			dir, err := os.MkdirTemp("", "tandem-bench-serve-")
			if err != nil {
				return fmt.Errorf("bench serve: %w", err)
			}
			defer os.RemoveAll(dir)
			reg, err := a.registry()
			if err != nil {
				return err
			}
			st, _, err := createStore(cmd.Context(), filepath.Join(dir, "bench.db"), store.Options{Registry: reg}, nil)
			if err != nil {
				return err
			}
			defer st.Close()
			cfg.Store, cfg.Dir = st, dir
			res, err := serve.BenchServe(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(a.stdout).Encode(res)
			}
			printBenchServe(a, res)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Sessions, "sessions", 50, "SSH editor sessions at once")
	fl.IntVar(&cfg.Rounds, "rounds", 5, "saves per session")
	fl.DurationVar(&cfg.Dwell, "dwell", 2*time.Second, "the longest a session watches the list between its saves")
	fl.DurationVar(&cfg.Think, "think", 80*time.Millisecond, "pause between two keys of a session")
	fl.BoolVar(&asJSON, "json", false, "print the figures as JSON")
	return cmd
}

// printBenchServe prints bench serve's figures, one line each.
func printBenchServe(a *app, r *serve.BenchResult) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	fmt.Fprintf(a.stdout, "sessions %d, rounds %d, %s; load before %s, after %s\n", r.Sessions, r.Rounds, r.Elapsed.Round(time.Millisecond), r.LoadBefore, r.LoadAfter)
	fmt.Fprintf(a.stdout, "keystroke to frame   p50 %s  p99 %s  max %s  (%d keys)\n", ms(r.Keystroke.P50), ms(r.Keystroke.P99), ms(r.Keystroke.Max), r.Keystroke.N)
	fmt.Fprintf(a.stdout, "save seen by others  p50 %s  p99 %s  max %s  (%d sightings, %d missed)\n", ms(r.Seen.P50), ms(r.Seen.P99), ms(r.Seen.Max), r.Seen.N, r.Missed)
	fmt.Fprintf(a.stdout, "memory per session   %.1f MB resident, %.1f MB Go heap\n", float64(r.RSSPerSession)/1e6, float64(r.HeapPerSession)/1e6)
	fmt.Fprintf(a.stdout, "saves %d, lost %d, failed steps %d\n", r.Saves, r.Lost, r.Failed)
	for _, f := range r.Failures {
		fmt.Fprintf(a.stdout, "  failed: %s\n", f)
	}
}
