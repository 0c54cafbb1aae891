package inband

import (
	"strconv"
	"strings"
)

// The lines history trimming writes where it leaves out or edits earlier
// tool results of a conversation.

// Stale stands for the result of the read Read that the later call Write
// superseded.
type Stale struct{ Read, Write string }

func (x Stale) String() string {
	return "> [stale: result of " + x.Read + " left out; " + x.Write + " changed the file since; read it again for its current content]"
}

// Trimmed stands for the result of Call that history trimming left out;
// a read-only call can be made again, any other is declared not
// recoverable.
type Trimmed struct {
	Call     string
	ReadOnly bool
}

func (x Trimmed) String() string {
	if x.ReadOnly {
		return "> [trimmed: result of " + x.Call + "; call it again to see it]"
	}
	return "> [trimmed: result of " + x.Call + "; not recoverable: the call may have side effects, do not repeat it]"
}

// ToolCount is a tool and how many of its calls a line counts.
type ToolCount struct {
	Name string
	N    int
}

// Dropped declares the N tool calls history trimming removed whole, by
// tool (at most six named; More when there were others), and whether any
// of them wrote (Writes).
type Dropped struct {
	N      int
	Tools  []ToolCount
	More   bool
	Writes bool
}

func (x Dropped) String() string {
	var b strings.Builder
	b.WriteString("> [trimmed: " + strconv.Itoa(x.N) + " earlier tool calls and their results left out (")
	for i, t := range x.Tools {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.Name + " ×" + strconv.Itoa(t.N))
	}
	if x.More {
		b.WriteString(", …")
	}
	if x.Writes {
		b.WriteString("); calls that only read can be made again, the others' results are not recoverable]")
	} else {
		b.WriteString("); call a tool again to see its result]")
	}
	return b.String()
}

// Resent names the call whose result, as sent, follows a note placed
// before it: "> [the result of Read \"a.go\" (toolu_01) follows, as sent]".
type Resent struct{ Call string }

func (x Resent) String() string { return "> [the result of " + x.Call + " follows, as sent]" }
