package inband

import (
	"strconv"
	"strings"
)

// The lines below are written today by the text shaper (package shape)
// and the API proxy's history edits (package apiproxy), which build them
// by hand; these types give them one form to move to.

// Shaping declares a lossless or display shaping and its rules:
// "> [lossless: numbered lines unpadded; paths relative to /repo]".
type Shaping struct {
	Class string // "lossless", "display"
	Rules []string
}

func (x Shaping) String() string { return "> [" + x.Class + ": " + strings.Join(x.Rules, "; ") + "]" }

// ElidedRuns opens a text whose runs of lines were folded or left out,
// What saying which: Runs runs, Kept of Total lines kept, the rest by
// Call.
//
//	> [elided: passing tests folded into counts, 3 runs (41 of 58 lines kept); get chunk N whole: terse chunk c_0123456789abcdef N]
type ElidedRuns struct {
	What        string
	Runs        int
	Kept, Total int
	Call        string
}

func (x ElidedRuns) String() string {
	return "> [elided: " + x.What + ", " + Plural(x.Runs, "run") + " (" + strconv.Itoa(x.Kept) + " of " + strconv.Itoa(x.Total) + " lines kept); get chunk N whole: " + x.Call + "]"
}

// Folded stands for the lines First–Last (1-based) folded into chunk
// Chunk; What counts what they held.
//
//	[… 24 lines left out: lines 3–26 (12 tests passed); chunk 2 …]
type Folded struct {
	First, Last int
	What        string
	Chunk       int
}

func (x Folded) String() string {
	what := ""
	if x.What != "" {
		what = " (" + x.What + ")"
	}
	return "[… " + strconv.Itoa(x.Last-x.First+1) + " lines left out: lines " + strconv.Itoa(x.First) + "–" + strconv.Itoa(x.Last) + what + "; chunk " + strconv.Itoa(x.Chunk) + " …]"
}

// Repeat follows a line repeated N more times: "[… same line 3 more times …]".
type Repeat struct{ N int }

func (x Repeat) String() string { return "[… same line " + strconv.Itoa(x.N) + " more times …]" }

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
