// Package telemetry records one anonymous event per processed tool result
// and reads them back for `terse stats` and `terse tune`.
//
// An entry point (proxy, gateway, API proxy, compact) fills an [Event]
// after the pipeline ran and passes it to [Recorder.Record]. Record never
// blocks and never allocates: the event is copied into a bounded queue; a
// full queue drops it and counts the drop. A nil *Recorder (telemetry off,
// the default) records nothing at the cost of a nil check.
//
// A background writer turns events into JSONL lines through a [Sink]; the
// default [DirSink] writes one file per session under a directory, rotates
// files at a size and deletes the oldest files beyond a total size. What is
// written is numbers, a fixed vocabulary of names, and salted hashes:
// never content, arguments, paths, URLs or error messages. Session ids and
// tool names are hashed with a per-install salt (tool names are written as
// they are only when the user opts in); endpoint classes, shapes, formats
// and error classes come from fixed lists and anything else is written as
// "other".
//
// [ReadDir] reads a directory of events back, skipping (and counting)
// lines it cannot use.
package telemetry

import (
	"github.com/terse-dev/terse/toolname"
	"strings"
	"time"
)

// Version is the schema version written in every event ("v"). Fields are
// only ever added.
const Version = 1

// Source is a pipeline stage that saves (or costs) tokens.
type Source uint8

// Sources, in the order of Event.Saved.
const (
	SrcFilter Source = iota
	SrcDedup
	SrcEncoding
	SrcFit
	SrcHistory
	SrcStale
	SrcApplied // a write call's payload in history, applied long ago
	SrcElided  // an old bulky result in history, left out in a batch
	NumSources
)

// SourceNames are the sources as written.
var SourceNames = [NumSources]string{"filter", "dedup", "encoding", "fit", "history", "stale", "applied", "elided"}

// String is the source's name as written ("unknown" for none).
func (s Source) String() string {
	if s < NumSources {
		return SourceNames[s]
	}
	return "unknown"
}

// ParseSource returns the source written as name.
func ParseSource(name string) (Source, bool) {
	for i, n := range SourceNames {
		if n == name {
			return Source(i), true
		}
	}
	return NumSources, false
}

// Hint is an in-band hint family.
type Hint uint8

// Hint families, in the order of Event.Hints. HintID counts the "[id: …]"
// lines shown with results that later references point at.
const (
	HintRef Hint = iota
	HintNearRef
	HintMore
	HintQuery
	HintEncoded
	HintID
	NumHints
)

// HintNames are the families as written (and as the config's [hints]
// tables name them).
var HintNames = [NumHints]string{"ref", "near_ref", "more", "query", "encoded", "id"}

// Shape is the structural shape of a result.
type Shape uint8

// Shapes.
const (
	ShapeUnknown Shape = iota
	ShapeEmpty
	ShapeFlatObject
	ShapeNestedObject
	ShapeArrayOfObjects
	ShapeArrayOfPrimitives
	ShapeMarkdownTable
	ShapeCodeBlock
	ShapeNumberedList
	ShapeBulletList
	ShapeLog
	ShapeDiff
	ShapeProse
	numShapes
)

// ShapeNames are the shapes as written.
var ShapeNames = [numShapes]string{"unknown", "empty", "flat_object", "nested_object", "array_of_objects",
	"array_of_primitives", "markdown_table", "code_block", "numbered_list", "bullet_list", "log", "diff", "prose"}

func (s Shape) String() string {
	if s < numShapes {
		return ShapeNames[s]
	}
	return "unknown"
}

// IsJSON reports whether the shape is one of JSON's.
func (s Shape) IsJSON() bool { return s >= ShapeEmpty && s <= ShapeArrayOfPrimitives }

// Inner is a set of formats found inside a result (in string values of
// JSON, or in text).
type Inner uint16

// Inner formats.
const (
	InURL Inner = 1 << iota
	InLog
	InHash
	InDiff
	InStackTrace
	InMarkdownTable
	InCodeFence
	numInner = 7
)

// InnerNames are the inner formats as written, bit by bit.
var InnerNames = [numInner]string{"url", "log", "hash", "diff", "stack_trace", "md_table", "code_fence"}

// Names lists the formats in the set.
func (in Inner) Names() []string {
	var out []string
	for i, n := range InnerNames {
		if in&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// DedupOutcome says what the dedup stage did.
type DedupOutcome uint8

// Dedup outcomes.
const (
	DedupOff DedupOutcome = iota // not asked
	DedupMiss
	DedupHit
	DedupNear
)

var dedupNames = [...]string{"", "miss", "hit", "near"}

// Reasons a result was left as it was (Event.Untouched).
const (
	UntouchedExcluded = "excluded"  // the tool is excluded by configuration
	UntouchedTooSmall = "too_small" // below the minimum size
	UntouchedTooLarge = "too_large" // above the maximum size: only fitted
	UntouchedError    = "error"     // the pipeline failed; the original was passed
	UntouchedNoSaving = "no_saving" // processed, nothing cheaper found
)

// Entry points (Event.Entry).
const (
	EntryProxy   = "proxy"
	EntryGateway = "gateway"
	EntryAPI     = "api"
	EntryCompact = "compact"
	EntryReplay  = "replay"
	EntryHook    = "hook" // an agent's tool-result hook (terse hook)
)

// Event is one processed result. The zero value of every field means
// "not measured". Strings other than Session and Tool must come from the
// fixed vocabularies named on each field; anything else is written as
// "other", so that no content can leak through them.
type Event struct {
	// Time is when the result was processed; zero means when it is
	// recorded.
	Time time.Time
	// Entry is the entry point (EntryProxy, ...).
	Entry string
	// Session is the session or connection id; it is written only as a
	// salted hash. Partition counts the session's compactions so far.
	Session   string
	Partition int
	// Sidechain marks a sub-agent's call.
	Sidechain bool
	// Tool is the tool's name: written as a salted hash unless tool
	// names are opted into. Class is its endpoint class (one of Classes);
	// empty means ClassOf(Tool).
	Tool  string
	Class string
	// Shape, Inner, Depth (JSON nesting depth) and Cols (Markdown table
	// columns) describe the input; see Detect.
	Shape Shape
	Inner Inner
	Depth uint8
	Cols  uint16
	// TextShape is the shape the text shaping stage found in a text
	// result (one of TextShapes; see package shape) and ShapeClass how it
	// was shaped (one of ShapeClasses; "" when it was left as it is).
	TextShape, ShapeClass string
	// Tokenizer names the counter of every token figure (o200k_base,
	// cl100k_base, estimate); the baseline is the input as compact JSON
	// (or text).
	Tokenizer string
	// Format is the output format: json, toon, auto, text, csv_from_md,
	// hint, or a template name.
	Format string
	// BytesIn/TokensIn are the input (baseline); BytesOut/TokensOut what
	// the model read.
	BytesIn, BytesOut   int
	TokensIn, TokensOut int
	// Saved splits TokensIn − TokensOut by source; a negative part cost
	// tokens (hints shown with results, for example).
	Saved [NumSources]int
	// Hints counts the hints emitted, by family.
	Hints [NumHints]uint16
	// Dedup is the dedup stage's outcome.
	Dedup DedupOutcome
	// Fingerprint identifies the input within the recording process
	// (Recorder.Fingerprint), so that the tuner can measure repeats;
	// 0 means none.
	Fingerprint uint64
	// ChunkFetch marks a chunk retrieval rather than a tool result;
	// Compactions counts compaction boundaries seen with this event.
	ChunkFetch  bool
	Compactions int
	// Brake marks the call with which the session's re-fetches of one
	// tool's results (chunk after chunk, or the same call again raw or
	// with a larger budget) switched that tool to lossless results for
	// the rest of the session.
	Brake bool
	// Latency is the time the pipeline took.
	Latency time.Duration
	// Err is an error class (parse, upstream, pipeline, budget, timeout,
	// store), never a message.
	Err string
	// Untouched says why the result was passed as it was (Untouched*).
	Untouched string
}

// Classes are the endpoint classes written. Tool names map onto them with
// ClassOf.
var Classes = []string{
	"file_read", "file_search", "file_mutate", "shell", "web", "task", "todo", "chunk",
	"mcp_list", "mcp_get", "mcp_search", "mcp_create", "mcp_update", "mcp_delete", "mcp_run", "mcp_other",
	"other",
}

// ClassOf maps a tool name to its endpoint class: the coarse kind of call,
// never the server or tool name itself.
func ClassOf(tool string) string {
	if toolname.WritesFiles(tool) {
		return "file_mutate"
	}
	switch tool {
	case "Read", "NotebookRead", "read_file", "read_text_file", "read_multiple_files", "read_media_file":
		return "file_read"
	case "Grep", "Glob", "LS", "search_files", "list_directory", "directory_tree", "get_file_info":
		return "file_search"
	case "Bash", "BashOutput", "shell", "exec_command", "local_shell", "run_terminal_cmd":
		return "shell"
	case "WebFetch", "WebSearch", "web_search", "fetch":
		return "web"
	case "Task", "Agent":
		return "task"
	case "TodoWrite", "update_plan":
		return "todo"
	case "terse_chunk", "chunk":
		return "chunk"
	}
	verb := strings.ToLower(toolname.Tool(tool))
	for _, p := range [...]struct{ prefix, class string }{
		{"list", "mcp_list"}, {"search", "mcp_search"}, {"find", "mcp_search"}, {"query", "mcp_search"},
		{"get", "mcp_get"}, {"read", "mcp_get"}, {"fetch", "mcp_get"}, {"describe", "mcp_get"}, {"show", "mcp_get"},
		{"create", "mcp_create"}, {"add", "mcp_create"}, {"post", "mcp_create"},
		{"update", "mcp_update"}, {"edit", "mcp_update"}, {"set", "mcp_update"}, {"merge", "mcp_update"},
		{"delete", "mcp_delete"}, {"remove", "mcp_delete"}, {"close", "mcp_delete"},
		{"run", "mcp_run"}, {"exec", "mcp_run"}, {"trigger", "mcp_run"},
	} {
		if strings.HasPrefix(verb, p.prefix) {
			return p.class
		}
	}
	if strings.Contains(tool, "__") {
		return "mcp_other"
	}
	return "other"
}

// vocabularies of the other string fields.
var (
	tokenizers = []string{"o200k_base", "cl100k_base", "estimate"}
	formats    = []string{"json", "toon", "auto", "text", "csv_from_md", "hint", "mr_diff_fence", "ci_pipeline", "passthrough"}
	errClasses = []string{"parse", "upstream", "pipeline", "budget", "timeout", "store", "canceled"}
	untouched  = []string{UntouchedExcluded, UntouchedTooSmall, UntouchedTooLarge, UntouchedError, UntouchedNoSaving}
	entries    = []string{EntryProxy, EntryGateway, EntryAPI, EntryCompact, EntryReplay, EntryHook}
)

// TextShapes are the text shapes written (package shape's names; any
// other is written as "other").
var TextShapes = []string{"read", "paths", "grep", "test", "log", "git", "build", "json"}

// ShapeClasses are the shaping classes written, from the safest.
var ShapeClasses = []string{"lossless", "display", "elide"}

// vocab returns s if it is in list, "" for "", and "other" otherwise.
func vocab(s string, list []string) string {
	if s == "" {
		return ""
	}
	for _, x := range list {
		if x == s {
			return x
		}
	}
	return "other"
}

// enumerated maps the fields whose values come from a fixed list to that
// list.
func enumerated() map[string][]string {
	return map[string][]string{"tok": tokenizers, "fmt": formats, "entry": entries, "class": Classes,
		"shape": ShapeNames[:], "tshape": TextShapes, "tclass": ShapeClasses, "err": errClasses, "skip": untouched}
}

// Vocabulary lists every fixed string an event file can hold besides
// numbers and hashes: the keys and the names of every closed set. Tool
// names appear only when opted into.
func Vocabulary() []string {
	v := []string{"v", "ms", "sid", "part", "side", "entry", "class", "tool", "shape", "inner", "depth", "cols", "tok", "fmt",
		"tshape", "tclass", "b_in", "b_out", "t_in", "t_out", "saved", "hints", "dedup", "fp", "chunk", "compact", "lat_us", "err", "skip", "rate",
		"true", "other"}
	v = append(v, SourceNames[:]...)
	v = append(v, HintNames[:]...)
	v = append(v, ShapeNames[:]...)
	v = append(v, InnerNames[:]...)
	v = append(v, dedupNames[1:]...)
	for _, l := range [][]string{Classes, tokenizers, formats, errClasses, untouched, entries, TextShapes, ShapeClasses} {
		v = append(v, l...)
	}
	return v
}
