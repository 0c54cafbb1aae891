package mcpproxy

import (
	"strconv"
	"strings"

	"github.com/terse-dev/terse/profile"
)

// maxSessions bounds the sessions the engine keeps state for; past it
// the least recently used is dropped, its partitions reset as when it
// ends (its brake and hint counts start over).
const maxSessions = 1 << 14

// sessionState is what the engine keeps about one session, in one
// bounded LRU (engine.sessions): its compaction counters, the
// conversations it named, its hint counts (max_per_session) and its
// re-fetch brake. Nothing is kept for an ephemeral call.
type sessionState struct {
	gen      int            // compactions of the whole session
	convs    []string       // conversations named, in order
	convGens map[string]int // compactions of each conversation
	hints    *profile.HintCounter
	brake    *brakeState
}

// sessionLocked returns the state of session, created when create is
// set (else a zero state stands for one not kept); nil never. e.mu is
// held.
func (e *engine) sessionLocked(session string, create bool) *sessionState {
	if st, ok := e.sessions.Get(session); ok {
		return st
	}
	st := new(sessionState)
	if create {
		e.sessions.Set(strings.Clone(session), st)
	}
	return st
}

// partitions names every partition of the session: its own and each of
// its conversations'.
func (st *sessionState) partitions(session string) []string {
	old := []string{partitionName(session, "", st)}
	for _, c := range st.convs {
		old = append(old, partitionName(session, c, st))
	}
	return old
}

// partitionName is the dedup partition of a session and conversation
// (see engine.partition).
func partitionName(session, conversation string, st *sessionState) string {
	n := strconv.Itoa(st.gen)
	if conversation == "" {
		return session + "/" + n
	}
	key := session + "#" + conversation
	if m := st.convGens[conversation]; m > 0 {
		return key + "/" + n + "." + strconv.Itoa(m)
	}
	return key + "/" + n
}
