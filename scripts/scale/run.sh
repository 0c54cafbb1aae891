#!/usr/bin/env bash
# Runs the gateway scale harness (internal/scale): Redis, three
# `terse gateway` replicas on loopback behind haproxy (round robin, no
# stickiness) and server-memory from npm. TestCluster checks dedup and
# chunks across replicas, a replica killed mid-run and Redis stopped and
# restarted; TestLoad sends CALLS calls at each concurrency, from clients
# of each protocol version in TERSE_SCALE_PROTOCOLS (default 2026-07-28,
# stateless, and 2025-11-25, with sessions in Redis), and prints a
# Markdown table (throughput, p50/p99, errors, Redis commands per call,
# peak RSS per replica). Everything listens on 127.0.0.1 and stops by itself.
#
# Usage: scripts/scale/run.sh [CALLS:C1,C2,...]   (default 5000:8,32,64)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
missing=()
for p in redis-server redis-cli haproxy node; do
	command -v "$p" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "scale: missing ${missing[*]}; on Debian: apt-get install redis-server haproxy nodejs npm" >&2
	exit 1
fi
[ -x mcpproxy/testdata/npm/node_modules/.bin/mcp-server-memory ] || bash scripts/install-mcp-servers.sh
TERSE_SCALE=1 TERSE_SCALE_LOAD="${1:-5000:8,32,64}" \
	TERSE_SCALE_PROTOCOLS="${TERSE_SCALE_PROTOCOLS:-2026-07-28,2025-11-25}" \
	go test ./internal/scale -run 'TestCluster|TestLoad' -count=1 -v -timeout 30m
