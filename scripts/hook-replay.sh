#!/bin/sh
# hook-replay.sh replays every tool call of the Claude Code transcripts in
# the shared corpus (../shared/corpus/agent-sessions/claude and
# claude-long, or $TERSE_SHARED) through "terse hook claude-code" and prints,
# per tool and in total, the o200k tokens before and after, the outputs
# produced and the modeled session cost. It fails when a replacement is
# not a reference to a result still in context, a retrievable elision, a
# text shaping that "terse expand" gives back the original of, or a
# lossless encoding. Usage: scripts/hook-replay.sh [OUT]
set -eu
cd "$(dirname "$0")/.."
out=${1:-}
TERSE_REPLAY_OUT=${out:+$(realpath -m "$out")} go test ./cmd/terse -run '^TestHookReplay$' -count=1 -v | sed -n '/hook replay of/,/^---/p'
