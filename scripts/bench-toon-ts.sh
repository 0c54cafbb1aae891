#!/usr/bin/env bash
# bench-toon-ts.sh: JSON→TOON on a ~20 MB document made from the corpus,
# terse against the TypeScript reference implementation (@toon-format/toon
# 4.x, its encode() in a small script, and the @toon-format/cli command),
# whole processes on the same input file, timed with hyperfine.
#
# Usage: scripts/bench-toon-ts.sh [RUNS] [REV...]
#
#   RUNS  hyperfine runs per command (default 10)
#   REV   other revisions of terse to time in the same run (a worktree of
#         each is made in the temporary folder), e.g. e6291d9 main
#
# Needs go, node, npm and hyperfine (apt-get install hyperfine); the corpus
# is read from $TERSE_SHARED/corpus (default ../shared/corpus beside the
# checkout). Everything else lives in a temporary folder that is removed
# at exit. Wall time is what hyperfine's summary compares; on a busy
# machine compare the User and System times as well (node runs its
# collector on other threads, so CPU time flatters it a little).
# Target: terse ≥ 12× faster than the reference's encode().
set -euo pipefail

runs=${1:-10}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${TERSE_SHARED:-$root/../shared}
work=$(mktemp -d)
cleanup() {
	for wt in "$work"/rev-*; do
		[ -d "$wt" ] && git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

command -v hyperfine >/dev/null || { echo "hyperfine not found (apt-get install hyperfine)" >&2; exit 1; }

echo "== generating the input document"
(cd "$root" && go run ./scripts/gendoc -corpus "$shared/corpus" -mb 20 -o "$work/doc.json")
echo "input: $(wc -c <"$work/doc.json") bytes"

echo "== building terse"
(cd "$root" && go build -o "$work/terse" ./cmd/terse)
cmds=(-n "terse ($(git -C "$root" rev-parse --short HEAD))" "$work/terse encode $work/doc.json > $work/terse.toon")
for rev in "$@"; do
	wt="$work/rev-$rev"
	git -C "$root" worktree add --detach "$wt" "$rev" >/dev/null 2>&1
	(cd "$wt" && go build -o "$work/terse-$rev" ./cmd/terse)
	cmds+=(-n "terse $rev" "$work/terse-$rev encode $work/doc.json > $work/terse-$rev.toon")
done

echo "== installing @toon-format/toon and @toon-format/cli 4.x"
(cd "$work" && npm init -y >/dev/null 2>&1 &&
	npm install --silent --no-audit --no-fund --loglevel=error '@toon-format/toon@^4' '@toon-format/cli@^4' >/dev/null)
version=$(node -p "require('$work/node_modules/@toon-format/toon/package.json').version")
cliversion=$(node -p "require('$work/node_modules/@toon-format/cli/package.json').version")
echo "@toon-format/toon $version, @toon-format/cli $cliversion, node $(node --version)"

cat >"$work/encode.mjs" <<'JS'
// Read a JSON file, encode it as TOON, write the result: the same work as
// `terse encode`.
import { readFileSync, writeFileSync } from 'node:fs';
import { encode } from '@toon-format/toon';
const [input, output] = process.argv.slice(2);
writeFileSync(output, encode(JSON.parse(readFileSync(input, 'utf8'))) + '\n');
JS

echo "== timing ($runs runs each, interleaved warm-up)"
hyperfine --warmup 1 --runs "$runs" \
	-n "typescript encode() $version" "node $work/encode.mjs $work/doc.json $work/ts.toon" \
	-n "typescript cli $cliversion" "$work/node_modules/.bin/toon $work/doc.json -o $work/cli.toon" \
	"${cmds[@]}"

if cmp -s "$work/ts.toon" "$work/terse.toon"; then
	echo "output: terse is byte-identical to the TypeScript output"
else
	lines=$(diff "$work/ts.toon" "$work/terse.toon" | grep -c '^<' || true)
	echo "output: terse differs from the TypeScript output on $lines lines; first differences:"
	diff "$work/ts.toon" "$work/terse.toon" | head -8 || true
fi
