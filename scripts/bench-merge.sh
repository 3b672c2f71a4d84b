#!/usr/bin/env bash
# bench-merge.sh: time `tandem merge-file -p` against `git merge-file -p` on the same
# generated inputs (1k, 10k and 100k lines, each side editing about one line in 50 at
# scattered places), with plain wall-clock timing: best of N runs of the whole process.
#
#   scripts/bench-merge.sh            # builds tandem into a temp dir
#   TANDEM=/path/to/tandem RUNS=20 scripts/bench-merge.sh
#
# Prints one row per size: best times, the tandem/git ratio (below 1 = tandem faster),
# whether the outputs are byte-identical, and tandem's growth from 10k to 100k lines
# (10x the input; about 10 means linear).
#
# Then the same for the worst case of a line diff (PATHO_SIZES, default 10k, 20k and
# 100k lines; PATHO_SIZES= skips it): base and ours are unrelated texts drawn from four
# short lines, theirs edits every 50th line of base. Both tools report conflicts there;
# their conflict hunks may differ (many diffs are equally good), so "identical" is
# informational; the exit codes (conflict counts, capped at 127) should agree.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS="${RUNS:-10}"
SIZES="${SIZES:-1000 10000 100000}"
PATHO_SIZES="${PATHO_SIZES-10000 20000 100000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ -z "${TANDEM:-}" ]; then
	TANDEM="$work/tandem"
	if ! go build -o "$TANDEM" . 2>"$work/build.log"; then
		# main.go may not build (yet): wrap merge.FileMain in a throwaway command.
		echo "bench-merge: go build . failed, using a throwaway merge-file wrapper" >&2
		mkdir -p "$work/cmd"
		cat >"$work/cmd/main.go" <<'GO'
package main

import (
	"os"

	"github.com/tandem-editor/tandem/merge"
)

func main() { os.Exit(merge.FileMain(os.Args[2:], os.Stdout, os.Stderr)) }
GO
		mkdir -p ./.bench-merge-tmp && cp "$work/cmd/main.go" ./.bench-merge-tmp/
		trap 'rm -rf "$work" ./.bench-merge-tmp' EXIT
		go build -o "$TANDEM" ./.bench-merge-tmp
	fi
fi
command -v git >/dev/null || { echo "bench-merge: git not found" >&2; exit 1; }

# gen N SEED: base, ours and theirs of N lines in $work/N/.
gen() {
	local n="$1" dir="$work/$1"
	mkdir -p "$dir"
	awk -v n="$n" -v dir="$dir" 'BEGIN {
		srand(42)
		for (i = 0; i < n; i++) line[i] = sprintf("line %d: %08x", i, int(rand() * 4294967295))
		for (i = 0; i < n; i++) print line[i] > (dir "/base")
		split("ours theirs", side, " ")
		for (s = 1; s <= 2; s++) {
			off = (s == 1) ? 0 : 25
			f = dir "/" side[s]
			for (i = 0; i < n; i++) {
				if ((i + off) % 50 == 0)       print line[i] " edited by " side[s] > f
				else if ((i + off) % 97 == 0)  { print line[i] > f; print "inserted by " side[s] " after " i > f }
				else if ((i + off) % 113 == 0) continue
				else                           print line[i] > f
			}
		}
	}'
}

# gen_patho N: the worst case in $work/pN/ (see the header).
gen_patho() {
	local n="$1" dir="$work/p$1"
	mkdir -p "$dir"
	awk -v n="$n" -v dir="$dir" 'BEGIN {
		srand(7)
		v[0] = "}"; v[1] = ""; v[2] = "\treturn nil"; v[3] = "\t}"
		for (i = 0; i < n; i++) {
			b = v[int(rand() * 4)]
			print b > (dir "/base")
			print v[int(rand() * 4)] > (dir "/ours")
			print (i % 50 == 0 ? "edited by theirs" : b) > (dir "/theirs")
		}
	}'
}

# best CMD...: best wall time of RUNS runs in nanoseconds (exit status ignored: conflicts
# are exit codes too).
best() {
	local b=0 t0 t1 d
	for _ in $(seq "$RUNS"); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		t1=$(date +%s%N)
		d=$((t1 - t0))
		if [ "$b" -eq 0 ] || [ "$d" -lt "$b" ]; then b=$d; fi
	done
	echo "$b"
}

# row LABEL DIR: compare the two tools on DIR/{ours,base,theirs} and print one row.
row() {
	local label="$1" d="$2" te ge same t g
	"$TANDEM" merge-file -p "$d/ours" "$d/base" "$d/theirs" >"$d/out.tandem" 2>/dev/null && te=0 || te=$?
	git merge-file -p "$d/ours" "$d/base" "$d/theirs" >"$d/out.git" 2>/dev/null && ge=0 || ge=$?
	same=no
	if cmp -s "$d/out.tandem" "$d/out.git" && [ "$te" -eq "$ge" ]; then same=yes; fi
	t=$(best "$TANDEM" merge-file -p "$d/ours" "$d/base" "$d/theirs")
	g=$(best git merge-file -p "$d/ours" "$d/base" "$d/theirs")
	last_t=$t
	printf '%8s %12.2f %12.2f %7.2f %10s\n' "$label" "$(echo "$t/1000000" | bc -l)" \
		"$(echo "$g/1000000" | bc -l)" "$(echo "$t/$g" | bc -l)" "$same (exit $te/$ge)"
}

printf '%8s %12s %12s %7s %10s\n' lines tandem_ms git_ms ratio identical
declare -A tt
for n in $SIZES; do
	gen "$n"
	row "$n" "$work/$n"
	tt[$n]=$last_t
done
if [ -n "${tt[10000]:-}" ] && [ -n "${tt[100000]:-}" ]; then
	printf 'tandem growth 10k -> 100k lines: %.1fx (10x input)\n' "$(echo "${tt[100000]}/${tt[10000]}" | bc -l)"
fi
[ -n "$PATHO_SIZES" ] || exit 0
echo "worst case: unrelated texts of four distinct lines"
declare -A pt
for n in $PATHO_SIZES; do
	gen_patho "$n"
	row "p$n" "$work/p$n"
	pt[$n]=$last_t
done
if [ -n "${pt[10000]:-}" ] && [ -n "${pt[100000]:-}" ]; then
	printf 'tandem growth 10k -> 100k lines: %.1fx (10x input)\n' "$(echo "${pt[100000]}/${pt[10000]}" | bc -l)"
fi
exit 0
