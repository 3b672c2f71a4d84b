package cli

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// seedEnv names the variable that repeats a randomised test's schedule: set it to the seed
// a run printed.
const seedEnv = "TANDEM_TEST_SEED"

// testRand returns the random source of a randomised test (kill points, delays), seeded
// from $TANDEM_TEST_SEED when it is set and from the clock otherwise, and logs the seed so
// that a failing run can be repeated with the same schedule. (The processes' own timing
// still varies from run to run.) A seed that is not a number fails the test.
func testRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(seedEnv); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q is not a seed (an unsigned integer): %v", seedEnv, v, err)
		}
		seed = s
	}
	t.Logf("random seed %d (repeat with %s=%d)", seed, seedEnv, seed)
	return rand.New(rand.NewPCG(seed, 12))
}
