#!/usr/bin/env bash
# Installs the real MCP servers that the mcpproxy end-to-end tests drive
# (server-everything, server-filesystem, server-memory) into
# mcpproxy/testdata/npm. That folder is ignored by git; tests that need the
# servers skip with a message naming this script when it has not been run.
#
# Usage: scripts/install-mcp-servers.sh [DIR]   (default: mcpproxy/testdata/npm)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/mcpproxy/testdata/npm}"

# Pinned so that CI runs are reproducible; bump deliberately.
pkgs=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
)

if ! command -v npm >/dev/null 2>&1; then
  echo "install-mcp-servers: npm not found; install Node.js 18+ first" >&2
  exit 1
fi

mkdir -p "$dir"
if [ ! -f "$dir/package.json" ]; then
  printf '{\n  "name": "terse-mcp-test-servers",\n  "private": true\n}\n' >"$dir/package.json"
fi
cd "$dir"
npm install --no-audit --no-fund --loglevel=error "${pkgs[@]}" >&2
echo "install-mcp-servers: installed into $dir" >&2
