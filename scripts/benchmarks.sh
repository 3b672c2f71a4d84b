#!/usr/bin/env bash
# Reproduces the tables in BENCHMARKS.md: every tandem bench on SQLite and, when
# TANDEM_TEST_POSTGRES names a server, on PostgreSQL (in a schema of its own, dropped after).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/tandem
go build -o "$bin" .
work=$(mktemp -d)
trap 'rm -rf "$work" "$(dirname "$bin")"' EXIT

echo "## The run"; echo; echo "Machine:"; echo; echo '```'
echo "$(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(go version), $(uname -sr)"
echo '```'

run() { echo; echo "### \`tandem $*\`"; echo; echo '```'; "$bin" "$@"; echo '```'; }

for rows in 1 16; do
	run --db "$work/bench-$rows.db" bench contention --workers 4 --ops 500 --rows "$rows"
done
run --db "$work/bench-procs.db" bench contention --workers 4 --ops 250 --procs
run --db "$work/import.db" --create bench import --rows 100000

if [ -n "${TANDEM_TEST_POSTGRES:-}" ]; then
	schema="tandem_bench_$$"
	psql "$TANDEM_TEST_POSTGRES" -qc "CREATE SCHEMA $schema"
	trap 'psql "$TANDEM_TEST_POSTGRES" -qc "DROP SCHEMA $schema CASCADE"; rm -rf "$work" "$(dirname "$bin")"' EXIT
	sep='?'; case "$TANDEM_TEST_POSTGRES" in *\?*) sep='&';; esac
	pg="$TANDEM_TEST_POSTGRES${sep}search_path=$schema"
	for rows in 1 16; do
		run --db "$pg" bench contention --workers 4 --ops 500 --rows "$rows"
	done
	run --db "$pg" bench contention --workers 4 --ops 250 --procs
	run --db "$pg" bench import --rows 100000
	# The save path's figures (issue 11): eight writer processes, on one row and on 64.
	for rows in 1 64; do
		run --db "$pg" bench contention --workers 8 --procs --ops 250 --rows "$rows" --strategy raw,relative
	done
fi

run bench merge --runs 7
run bench editor
