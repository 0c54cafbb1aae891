package mcpproxy

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// Scope is whom a gateway call belongs to: the tenant its bearer token
// names, the MCP session it came in, and the conversation it names
// (params._meta "terse/conversation"). Every key the gateway builds for a
// call is derived here, from the one string form (String); see the
// package doc's Terminology.
type Scope struct {
	Tenant       string // "" without authentication
	Session      string // "" for a stateless request (2026-07-28)
	Conversation string // "" when the client names none
}

// Ephemeral reports whether s is a stateless call without a conversation:
// one call, never continued, for which nothing is kept.
func (s Scope) Ephemeral() bool { return s.Session == "" && s.Conversation == "" }

func (s Scope) tenantPrefix() string {
	if s.Tenant == "" {
		return ""
	}
	return s.Tenant + ":"
}

// String is the scope's one string form, its owner: "TENANT:SESSION",
// "TENANT:~#CONVERSATION" for a stateless conversation and "TENANT:~" for
// an ephemeral call ("TENANT:" absent without a tenant). Chunk handles are
// owned by it; the conversation of a session is not part of it.
func (s Scope) String() string {
	switch {
	case s.Session != "":
		return s.tenantPrefix() + s.Session
	case s.Conversation != "":
		return s.tenantPrefix() + "~#" + s.Conversation
	}
	return s.tenantPrefix() + "~"
}

// Counter is the key of the scope's compaction counter: String(), with
// "#CONVERSATION" for a conversation within a session; "" for an
// ephemeral call, which has none.
func (s Scope) Counter() string {
	switch {
	case s.Ephemeral():
		return ""
	case s.Session != "" && s.Conversation != "":
		return s.String() + "#" + s.Conversation
	}
	return s.String()
}

// Generation is the session name the engine partitions dedup by when the
// compaction counters are the GatewayState's: the counter's key and the
// generations read for it, "KEY@N", or "KEY@N.M" with the whole
// session's counter M after a conversation's N.
func (s Scope) Generation(gens []int) string {
	g := s.Counter() + "@" + strconv.Itoa(gens[0])
	if len(gens) > 1 {
		g += "." + strconv.Itoa(gens[1])
	}
	return g
}

// ephemeral marks the engine session of an ephemeral call: a partition
// of its own, nothing in it ever referenced (see SharedDedup).
const ephemeral = "~!"

// ephemeralSession is the engine session of an ephemeral call: its
// tenant and a random name no other call has.
func (s Scope) ephemeralSession() string {
	var b [8]byte
	rand.Read(b[:])
	return s.tenantPrefix() + ephemeral + hex.EncodeToString(b[:])
}

// chunkScope is what the call's chunk handles are bound to: the owner
// and the conversation, stable across compactions.
func (s Scope) chunkScope() string { return "gw\x00" + s.String() + "\x00" + s.Conversation }

// recordKey is the key of the session's record in the GatewayState.
func (s Scope) recordKey() string { return "s:" + s.tenantPrefix() + s.Session }

// clientKey is the key of the client name a conversation's requests
// carried, in the GatewayState.
func (s Scope) clientKey() string { return "c:" + s.String() }
