#!/usr/bin/env bash
# replay-shapes.sh: replays the tool result of every transcript in the
# shared corpus (agent-sessions: Claude Code and Codex) through the
# pipeline as the CLI and the MCP proxy build it, with text shaping on,
# and prints, per shape and in total, o200k_base tokens before and after,
# the results changed per class, and the checks: every lossless or
# display result expands back byte for byte (to the terminal view for
# display), every elision's chunks join back to the original, no anchor
# is lost; then again with the references terse api writes on top
# (whole results and runs of lines the model still has, each resolved
# back to the text it stands for). Then it asks the reading tests'
# questions of the shaped texts and of re-reads given line references.
#
# Usage: scripts/replay-shapes.sh   (the corpus is read from
# $TERSE_SHARED/corpus, default ../shared beside the checkout)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
go test -count=1 -run 'TestReplayShapes$' -v . | sed -n '/shape_replay_test/,/^---/p'
go test -count=1 -run 'TestReading$' -v ./shape | grep -E 'questions|lines asked|^(---|ok|FAIL)'
go test -count=1 -run 'TestLinesReading$' -v ./dedup | grep -E 'questions|lines asked|^(---|ok|FAIL)'
