#!/usr/bin/env bash
# bench-toon-ts.sh: JSON→TOON on a ~20 MB document made from the corpus,
# terse against the TypeScript reference implementation (@toon-format/toon
# 4.x from npm), whole processes on the same input file.
#
# Usage: scripts/bench-toon-ts.sh [RUNS]   (default 3; the best run counts)
#
# Needs go, node and npm; the corpus is read from $TERSE_SHARED/corpus
# (default ../shared/corpus beside the checkout). Everything else lives in
# a temporary folder that is removed at exit. Target: terse ≥ 5× faster.
set -euo pipefail

runs=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${TERSE_SHARED:-$root/../shared}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== generating the input document"
(cd "$root" && go run ./scripts/gendoc -corpus "$shared/corpus" -mb 20 -o "$work/doc.json")
size=$(wc -c <"$work/doc.json")
echo "input: $size bytes"

echo "== building terse"
(cd "$root" && go build -o "$work/terse" ./cmd/terse)

echo "== installing @toon-format/toon 4.x"
(cd "$work" && npm init -y >/dev/null 2>&1 &&
	npm install --silent --no-audit --no-fund --loglevel=error '@toon-format/toon@^4' >/dev/null)
version=$(node -p "require('$work/node_modules/@toon-format/toon/package.json').version")
echo "@toon-format/toon $version, node $(node --version)"

cat >"$work/encode.mjs" <<'JS'
// Read a JSON file, encode it as TOON, write the result: the same work as
// `terse encode`.
import { readFileSync, writeFileSync } from 'node:fs';
import { encode } from '@toon-format/toon';
const [input, output] = process.argv.slice(2);
writeFileSync(output, encode(JSON.parse(readFileSync(input, 'utf8'))) + '\n');
JS

# best RUNS CMD...: prints the best wall time of RUNS runs, in milliseconds.
best() {
	local n=$1 bestms= t0 t1 ms
	shift
	for _ in $(seq "$n"); do
		t0=$(date +%s%N)
		"$@"
		t1=$(date +%s%N)
		ms=$(((t1 - t0) / 1000000))
		if [ -z "$bestms" ] || [ "$ms" -lt "$bestms" ]; then bestms=$ms; fi
	done
	echo "$bestms"
}

echo "== timing (best of $runs)"
ts=$(best "$runs" node "$work/encode.mjs" "$work/doc.json" "$work/ts.toon")
canon=$(best "$runs" sh -c "\"$work/terse\" encode --canonical \"$work/doc.json\" >\"$work/terse-canonical.toon\"")
exact=$(best "$runs" sh -c "\"$work/terse\" encode \"$work/doc.json\" >\"$work/terse.toon\"")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) b = 1; printf "%.1f", a / b }'; }
printf '%-34s %8s ms  %10s bytes\n' "typescript ($version)" "$ts" "$(wc -c <"$work/ts.toon")"
printf '%-34s %8s ms  %10s bytes  %sx faster\n' "terse encode --canonical" "$canon" "$(wc -c <"$work/terse-canonical.toon")" "$(ratio "$ts" "$canon")"
printf '%-34s %8s ms  %10s bytes  %sx faster\n' "terse encode (exact numbers)" "$exact" "$(wc -c <"$work/terse.toon")" "$(ratio "$ts" "$exact")"

if cmp -s "$work/ts.toon" "$work/terse-canonical.toon"; then
	echo "output: terse --canonical is byte-identical to the TypeScript output"
else
	lines=$(diff "$work/ts.toon" "$work/terse-canonical.toon" | grep -c '^<' || true)
	echo "output: terse --canonical differs from the TypeScript output on $lines lines; first differences:"
	diff "$work/ts.toon" "$work/terse-canonical.toon" | head -8 || true
fi
