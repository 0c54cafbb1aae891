#!/usr/bin/env bash
# dist.sh: builds terse's release artifacts and checks them as a user
# would get them.
#
#  1. Archives for linux, darwin and windows on amd64 and arm64, and
#     checksums.txt, per .goreleaser.yaml: with goreleaser when it is on
#     PATH ("goreleaser check", then a snapshot build), else with a
#     "go build" cross-compile loop that writes the same archive names
#     (installing goreleaser compiles for a long time on a small machine).
#     Either way every archive is checked against checksums.txt and the
#     binary for this machine must run "terse version".
#  2. npm packages the way esbuild ships: the launcher @terse-dev/terse
#     (npm/terse) and one @terse-dev/terse-<os>-<cpu> package per target
#     carrying the binary. All are packed with "npm pack"; the launcher and
#     this machine's package are installed from the tarballs into a
#     temporary project, and "npx @terse-dev/terse version" must run.
#
# Usage: scripts/dist.sh [OUT]   (default: dist; emptied first)
# TERSE_VERSION sets the version (default 0.0.0-snapshot).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)
version=${TERSE_VERSION:-0.0.0-snapshot}
targets="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "${out:?}"/*
cd "$root"

# npm's names for Go's operating systems and architectures.
npm_os() { case $1 in windows) echo win32 ;; *) echo "$1" ;; esac; }
npm_cpu() { case $1 in amd64) echo x64 ;; *) echo "$1" ;; esac; }
exe() { [ "$1" = windows ] && echo terse.exe || echo terse; }

echo "== archives"
if command -v goreleaser >/dev/null 2>&1; then
	goreleaser check
	goreleaser release --snapshot --clean --skip=publish
	cp dist/*.tar.gz dist/*.zip dist/checksums.txt "$out"/ 2>/dev/null || true
	for t in $targets; do
		goos=${t%/*} goarch=${t#*/}
		mkdir -p "$work/bin/${goos}_$goarch"
		cp dist/terse_"${goos}_$goarch"*/"$(exe "$goos")" "$work/bin/${goos}_$goarch/"
	done
	version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' dist/metadata.json | head -1)
	echo "built with $(goreleaser --version 2>&1 | grep -m1 -i version)"
else
	echo "goreleaser not on PATH: cross-compiling the targets of .goreleaser.yaml with go build"
	ldflags="-s -w -X main.version=$version"
	go build -o "$work/archive" ./scripts/archive
	for t in $targets; do
		goos=${t%/*} goarch=${t#*/}
		dir="$work/bin/${goos}_$goarch"
		mkdir -p "$dir"
		CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -ldflags "$ldflags" -o "$dir/$(exe "$goos")" ./cmd/terse
		ext=tar.gz
		[ "$goos" = windows ] && ext=zip
		"$work/archive" -o "$out/terse_${version}_${goos}_${goarch}.$ext" "$dir/$(exe "$goos")" README.md docs/*.md
		echo "terse_${version}_${goos}_${goarch}.$ext"
	done
	(cd "$out" && sha256sum terse_*.tar.gz terse_*.zip >checksums.txt)
fi
n=$(ls "$out"/terse_*.tar.gz "$out"/terse_*.zip | wc -l)
[ "$n" = 6 ] || { echo "want 6 archives, found $n"; exit 1; }
(cd "$out" && sha256sum -c --quiet checksums.txt)
host="$(go env GOOS)_$(go env GOARCH)"
"$work/bin/$host/$(exe "$(go env GOOS)")" version
echo "6 archives and checksums.txt in $out"

echo "== npm packages"
mkdir -p "$work/npm" "$out/npm"
for t in $targets; do
	goos=${t%/*} goarch=${t#*/}
	os=$(npm_os "$goos") cpu=$(npm_cpu "$goarch")
	dir="$work/npm/terse-$os-$cpu"
	mkdir -p "$dir/bin"
	cp "$work/bin/${goos}_$goarch/$(exe "$goos")" "$dir/bin/"
	cat >"$dir/package.json" <<JSON
{
  "name": "@terse-dev/terse-$os-$cpu",
  "version": "$version",
  "description": "The terse binary for $os $cpu; installed by @terse-dev/terse.",
  "license": "MIT",
  "repository": "github:terse-dev/terse",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/$(exe "$goos")"]
}
JSON
done
cp -r npm/terse "$work/npm/terse"
# The launcher's version and its platform packages' versions are the
# release's.
node -e '
const fs = require("fs"), f = process.argv[1], v = process.argv[2];
const p = JSON.parse(fs.readFileSync(f, "utf8"));
p.version = v;
for (const k of Object.keys(p.optionalDependencies)) p.optionalDependencies[k] = v;
fs.writeFileSync(f, JSON.stringify(p, null, 2) + "\n");
' "$work/npm/terse/package.json" "$version"
for d in "$work"/npm/*/; do
	(cd "$out/npm" && npm pack --silent "$d" >/dev/null)
done
ls "$out/npm"
[ "$(ls "$out"/npm/*.tgz | wc -l)" = 7 ] || { echo "want 7 npm tarballs"; exit 1; }

echo "== npx from the packed tarballs"
os=$(npm_os "$(go env GOOS)") cpu=$(npm_cpu "$(go env GOARCH)")
proj="$work/project"
mkdir -p "$proj"
(
	cd "$proj"
	npm init -y >/dev/null
	# The launcher's other platform packages are not published yet: only
	# this machine's is installed, from its tarball.
	npm install --no-audit --no-fund --loglevel=error --omit=optional \
		"$out/npm/terse-dev-terse-$version.tgz" "$out/npm/terse-dev-terse-$os-$cpu-$version.tgz"
	got=$(npx --no-install @terse-dev/terse version)
	echo "$got"
	case "$got" in
	"terse $version "*) ;;
	*) echo "npx @terse-dev/terse version: want terse $version"; exit 1 ;;
	esac
)
echo "== ok"
