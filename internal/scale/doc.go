// Package scale runs terse gateway the way a team runs it at scale:
// Redis, three gateway replicas on loopback behind haproxy (round robin,
// no stickiness) and a real upstream MCP server (server-memory from npm),
// and checks what replicas promise each other: one conversation served by
// all of them, a replica killed mid-run, Redis stopped and restarted. It
// also holds a bounded load test. Its tests run only when TERSE_SCALE is
// set (scripts/scale/run.sh); see docs/scaling.md.
package scale
