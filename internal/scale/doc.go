// Package scale runs terse gateway the way a team runs it at scale:
// Redis, three gateway replicas on loopback behind haproxy (round robin,
// no stickiness) and a real upstream MCP server (server-memory from npm),
// and checks what replicas promise each other: one conversation served by
// all of them, with stateless clients (2026-07-28) and with clients whose
// sessions (2025-11-25, 2025-06-18) are in Redis; a replica killed
// mid-run; Redis stopped and restarted; every key in terse's namespace.
// It also holds a bounded load test. Its tests run only when TERSE_SCALE is
// set (scripts/scale/run.sh); see docs/scaling.md.
package scale
