package inband

import (
	"strconv"
	"strings"
)

// The lines history trimming and the batched edits of a conversation
// write where they leave out or edit earlier tool calls and their results.

// ToolCall names a call inside a line: its tool, its id and a summary of
// its arguments (empty: none written), "Read call toolu_01 (file_path=a.go)".
type ToolCall struct{ Tool, ID, Args string }

func (x ToolCall) String() string {
	if x.Args == "" {
		return x.Tool + " call " + x.ID
	}
	return x.Tool + " call " + x.ID + " (" + x.Args + ")"
}

// Stale stands for the result of the read Read that the later call Write
// superseded.
//
//	> [stale: result of Read call toolu_01 (file_path=a.go) left out; Edit call toolu_03 (file_path=a.go) changed the file since; read it again for its current content]
type Stale struct{ Read, Write ToolCall }

func (x Stale) String() string {
	return "> [stale: result of " + x.Read.String() + " left out; " + x.Write.String() + " changed the file since; read it again for its current content]"
}

// Applied stands in a write call's input for a payload field (the text
// written or replaced) of a call that succeeded: N bytes of Field left
// out of Call.
//
//	> [applied: 1746 bytes of content left out of Write call toolu_02 (file_path=a.rs), which succeeded; read the file for its current content]
type Applied struct {
	N     int
	Field string
	Call  ToolCall
}

// AppliedHead opens the line of [Applied].
const AppliedHead = "> [applied: "

func (x Applied) String() string {
	return AppliedHead + strconv.Itoa(x.N) + " bytes of " + x.Field + " left out of " + x.Call.String() + ", which succeeded; read the file for its current content]"
}

// ElidedResult stands for an old bulky result of Call left out by a
// batch of edits: its Size in bytes, its Age in requests when it was left
// out, and the way back: the command Fetch prints it, or (Fetch empty)
// the call can be made again.
//
//	> [elided: result of Bash call toolu_04 (command=cargo build), 2576 bytes, left out 3 requests later; `terse chunk --session api-1 c_7264571674747575 1` prints it]
type ElidedResult struct {
	Call      ToolCall
	Size, Age int
	Fetch     string
}

// ElidedResultHead opens the line of [ElidedResult].
const ElidedResultHead = "> [elided: result of "

func (x ElidedResult) String() string {
	way := "call it again to see it"
	if x.Fetch != "" {
		way = "`" + x.Fetch + "` prints it"
	}
	return ElidedResultHead + x.Call.String() + ", " + strconv.Itoa(x.Size) + " bytes, left out " + strconv.Itoa(x.Age) + " requests later; " + way + "]"
}

// Trimmed stands for the result of Call that history trimming left out;
// a read-only call can be made again, any other is declared not
// recoverable.
//
//	> [trimmed: result of Grep call toolu_01 (pattern=p0); call it again to see it]
type Trimmed struct {
	Call     ToolCall
	ReadOnly bool
}

// TrimmedHead opens the line of [Trimmed].
const TrimmedHead = "> [trimmed: result of "

func (x Trimmed) String() string {
	if x.ReadOnly {
		return TrimmedHead + x.Call.String() + "; call it again to see it]"
	}
	return TrimmedHead + x.Call.String() + "; not recoverable: the call may have side effects, do not repeat it]"
}

// ToolCount is a tool and how many of its calls a line counts.
type ToolCount struct {
	Name string
	N    int
}

// Dropped declares the N tool calls history trimming removed whole, by
// tool (at most six named; More when there were others), and whether any
// of them wrote (Writes).
//
//	> [trimmed: 3 earlier tool calls and their results left out (Grep ×3); call a tool again to see its result]
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
// before it: "> [the result of Read call toolu_01 (file_path=a.go) follows, as sent]".
type Resent struct{ Call ToolCall }

func (x Resent) String() string { return "> [the result of " + x.Call.String() + " follows, as sent]" }
