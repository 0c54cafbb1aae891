package inband

import (
	"strconv"
	"strings"
)

// A Line is one line of in-band text, written by its String method
// (without a line break) and read back by [Parse].
type Line interface {
	String() string
}

// ID is the line shown with a recorded result, so that later references
// to it resolve by text match: "> [id: 3f2a1c9d]".
type ID struct{ ID string }

func (x ID) String() string { return "> [id: " + x.ID + "]" }

// Ref replaces a result byte-identical to the one shown with ID:
// "> [ref: 3f2a1c9d, byte-identical]". ID may name the call that showed
// it ("toolu_01ABC (Bash \"git status\")").
type Ref struct{ ID string }

func (x Ref) String() string { return "> [ref: " + x.ID + ", byte-identical]" }

// RefLines replaces a run of lines byte-identical to lines From–To
// (1-based, as shown, counted from the first line of its text) of the
// result shown with ID:
// "> [ref: toolu_01ABC (Read \"a.go\"), lines 12–80 of its result, byte-identical]".
type RefLines struct {
	ID       string
	From, To int
}

func (x RefLines) String() string {
	return "> [ref: " + x.ID + ", lines " + strconv.Itoa(x.From) + "–" + strconv.Itoa(x.To) + refLinesTail
}

const refLinesTail = " of its result, byte-identical]"

// HasRefLines reports whether a line of text reads as a [RefLines].
func HasRefLines(text string) bool {
	if !strings.Contains(text, refLinesTail) {
		return false
	}
	for l := range strings.SplitSeq(text, "\n") {
		if v, err := Parse(l); err == nil {
			if _, ok := v.(RefLines); ok {
				return true
			}
		}
	}
	return false
}

// Change is one scalar that differs in a near reference: its path and
// its old and new values, each written exactly (a JSON string when the
// bare text could be misread).
type Change struct{ Path, Old, New string }

// NearRef replaces a result equal to the one shown with ID except for
// the listed changes: "> [near-ref: 3f2a1c9d, status: pending→success]".
type NearRef struct {
	ID      string
	Changes []Change
}

func (x NearRef) String() string {
	var b strings.Builder
	b.WriteString("> [near-ref: ")
	b.WriteString(x.ID)
	for _, c := range x.Changes {
		b.WriteString(", ")
		b.WriteString(c.Path)
		b.WriteString(": ")
		b.WriteString(c.Old)
		b.WriteString("→")
		b.WriteString(c.New)
	}
	b.WriteString("]")
	return b.String()
}

// BudgetRaised says a result's budget was raised to the least that
// declares what it leaves out:
// "> [budget raised from 20 to 64 tokens: the least that declares what is left out]".
type BudgetRaised struct{ From, To int }

func (x BudgetRaised) String() string {
	return "> [budget raised from " + strconv.Itoa(x.From) + " to " + strconv.Itoa(x.To) + " tokens: the least that declares what is left out]"
}

// JSONDoc is the line before document K of N in a text of several JSON
// documents: "> [JSON document 2 of 3]".
type JSONDoc struct{ K, N int }

func (x JSONDoc) String() string {
	return "> [JSON document " + strconv.Itoa(x.K) + " of " + strconv.Itoa(x.N) + "]"
}

// Filtered declares what a configured filter left out, one part per
// kind of cut, the last part optionally saying how to get it back:
// "> [filtered: showing 10 of 120 items; 3 fields omitted]".
type Filtered struct{ Parts []string }

func (x Filtered) String() string { return "> [filtered: " + strings.Join(x.Parts, "; ") + "]" }

// FilterFailed says a configured filter did not apply and the output is
// unfiltered: "> [filter failed: no select path matched; output is unfiltered]".
type FilterFailed struct{ Reason string }

func (x FilterFailed) String() string {
	return "> [filter failed: " + x.Reason + "; output is unfiltered]"
}

// FilterRootMissing is the FilterFailed reason for a configured root the
// payload does not have.
func FilterRootMissing(root string) string { return "root " + root + " not found" }

// FilterNoMatch is the FilterFailed reason when no select path matched.
const FilterNoMatch = "no select path matched"

// Brake opens a result of a tool whose shortened results the session
// fetched again and again: from then on they come back whole.
type Brake struct{}

const brake = "> [terse: results of this tool were fetched again after terse shortened them; for the rest of this session they come back whole, nothing left out]"

func (Brake) String() string { return brake }

// Levels defines the detail levels of a JSON selection: what standard
// and minimal keep (empty: the level is not used).
//
//	> [levels: full = as in the source; standard = …; minimal = …; missing or blank fields of a shortened item were left out]
type Levels struct{ Standard, Minimal string }

func (x Levels) String() string {
	var b strings.Builder
	b.WriteString("> [levels: full = as in the source;")
	if x.Standard != "" {
		b.WriteString(" standard = " + x.Standard + ";")
	}
	if x.Minimal != "" {
		b.WriteString(" minimal = " + x.Minimal + ";")
	}
	b.WriteString(" missing or blank fields of a shortened item were left out]")
	return b.String()
}

// Wording of the diff levels.
const (
	diffStandard = "hunks over 8 lines cut to their first 5 and last 2, later hunks after 20 lines left out"
	diffMinimal  = "the file's header line and +/− counts"
)

// DiffLevels defines the detail levels a diff selection uses.
//
//	> [levels: full = the file's whole diff; standard = hunks over 8 lines cut …; minimal = the file's header line and +/− counts; every cut is marked where it is]
type DiffLevels struct{ Standard, Minimal bool }

func (x DiffLevels) String() string {
	var b strings.Builder
	b.WriteString("> [levels: full = the file's whole diff;")
	if x.Standard {
		b.WriteString(" standard = " + diffStandard + ";")
	}
	if x.Minimal {
		b.WriteString(" minimal = " + diffMinimal + ";")
	}
	b.WriteString(" every cut is marked where it is]")
	return b.String()
}

// LeftOut declares the units of Label a selection leaves out: Names
// lists them ([List]), N of Of Unit.
//
//	> [left out of /items: items 11–14, 16–120 (114 of 120 items)]
type LeftOut struct {
	Label, Names string
	N, Of        int
	Unit         string
}

func (x LeftOut) String() string {
	return "> [left out of " + x.Label + ": " + x.Names + " (" + strconv.Itoa(x.N) + " of " + strconv.Itoa(x.Of) + " " + x.Unit + ")]"
}

// Detail declares the units of Label shown at a lower level: Standard
// and Minimal list them ([List]; empty: none), with what each level
// keeps; RestFull says the units not named are full.
//
//	> [detail /items: items 11–14 standard (dropped …); item 15 minimal (identity fields only); the rest full]
type Detail struct {
	Label                  string
	Standard, StandardNote string
	Minimal, MinimalNote   string
	RestFull               bool
}

func (x Detail) String() string {
	var b strings.Builder
	b.WriteString("> [detail " + x.Label + ":")
	sep := " "
	if x.Standard != "" {
		b.WriteString(sep + x.Standard + " standard (" + x.StandardNote + ")")
		sep = "; "
	}
	if x.Minimal != "" {
		b.WriteString(sep + x.Minimal + " minimal (" + x.MinimalNote + ")")
	}
	if x.RestFull {
		b.WriteString("; the rest full")
	}
	b.WriteString("]")
	return b.String()
}

// Elided says how much of a source a response leaves out or shortens:
// Skipped and Short of Total units; Cut names shortened units "cut"
// (units without detail levels), else "shortened".
type Elided struct {
	Skipped, Short, Total int
	Unit                  string
	Cut                   bool
}

func (x Elided) String() string {
	shortened := "shortened"
	if x.Cut {
		shortened = "cut"
	}
	n, u := strconv.Itoa(x.Total), x.Unit
	switch {
	case x.Skipped == x.Total:
		return "all " + strconv.Itoa(x.Skipped) + " " + u + " left out, too large for this budget"
	case x.Skipped == 0:
		return strconv.Itoa(x.Short) + " of " + n + " " + u + " " + shortened
	case x.Short == 0:
		return strconv.Itoa(x.Skipped) + " of " + n + " " + u + " left out"
	}
	return strconv.Itoa(x.Skipped) + " of " + n + " " + u + " left out, " + strconv.Itoa(x.Short) + " " + shortened
}

// Retrieval is how the overflow hint says the rest can be had.
type Retrieval int

const (
	// OneChunk: the whole source in one fetch (Get, Call; Over when it
	// comes back split).
	OneChunk Retrieval = iota
	// ByChunk: chunk N of Chunks by Call; List names each chunk's range.
	ByChunk
	// Unavailable: the chunk store is down; RawHint says what else to do.
	Unavailable
	// NotStored: nothing was stored.
	NotStored
)

// Overflow is the hint that declares what a response leaves out and how
// to get it, when no chunk index follows.
//
//	> [114 of 120 items left out, 5 shortened: get all 120 items whole with: terse chunk c_0123456789012345 1; a fetch returns up to 20,000 tokens]
//	> [all 2 items left out, too large for this budget: get chunk N of 2 whole with: terse chunk c_0123456789012345 N; chunk 1: item 1, chunk 2: item 2 (over budget); a fetch returns up to 20,000 tokens]
//	> [23 of 25 items shortened: not retrievable right now (the chunk store is unavailable); re-run with a larger budget to see more]
//	> [92 of 118 lines left out: not stored; re-run with a larger budget to see them]
type Overflow struct {
	What Elided
	How  Retrieval
	// Get names what one fetch returns ("all 120 items", "item 1").
	Get  string
	Call string
	Over bool
	// Chunks and List: the chunks and their ranges ([ChunkList]).
	Chunks int
	List   string
	// Fetch is what a fetch without a budget of its own returns at most.
	Fetch   int
	RawHint string
}

func (x Overflow) String() string {
	what := x.What.String()
	switch x.How {
	case OneChunk:
		if x.Over {
			return "> [" + what + ": get " + x.Get + " with: " + x.Call + ", over budget: it comes back as smaller chunks, fetched the same way; a fetch returns up to " + Thousands(x.Fetch) + " tokens]"
		}
		return "> [" + what + ": get " + x.Get + " whole with: " + x.Call + "; a fetch returns up to " + Thousands(x.Fetch) + " tokens]"
	case ByChunk:
		return "> [" + what + ": get chunk N of " + strconv.Itoa(x.Chunks) + " whole with: " + x.Call + "; " + x.List + "; a fetch returns up to " + Thousands(x.Fetch) + " tokens]"
	case Unavailable:
		return "> [" + what + ": not retrievable right now (the chunk store is unavailable); " + x.RawHint + "]"
	}
	return "> [" + what + ": not stored; re-run with a larger budget to see them]"
}

// ChunkRange is one chunk's range in an overflow hint's list.
type ChunkRange struct {
	N    int
	Span string // "items 1–24", "files 1–2 (lines 1–80)"
	Over bool
}

// ChunkList writes the chunks' ranges for an overflow hint:
// "chunk 1: items 1–24, chunk 2: item 25 (over budget)".
func ChunkList(cs []ChunkRange) string {
	var b strings.Builder
	for k, c := range cs {
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString("chunk " + strconv.Itoa(c.N) + ": " + c.Span)
		if c.Over {
			b.WriteString(" (over budget)")
		}
	}
	return b.String()
}

// ChunkHead is the first line of a chunk fetched whole: which chunk of
// which handle, and where its units are; Parts marks a byte range of one
// unit's text, to be joined with the others in order.
//
//	> [chunk 2 of 5 of c_0123456789012345: items 5–8 of 30 at the root array, in full]
//	> [chunk 1 of 3 of c_0123456789012345: bytes 1–4,000 of 9,100 of item 7, in full (join the parts in order)]
type ChunkHead struct {
	N, Of  int
	Handle string
	Where  string
	Parts  bool
}

func (x ChunkHead) String() string {
	s := "> [" + x.title() + ": " + x.Where + ", in full"
	if x.Parts {
		return s + " (join the parts in order)]"
	}
	return s + "]"
}

func (x ChunkHead) title() string {
	return "chunk " + strconv.Itoa(x.N) + " of " + strconv.Itoa(x.Of) + " of " + x.Handle
}

// Pieces is how a chunk over the budget is split.
type Pieces int

const (
	Chunks    Pieces = iota // "split into K chunks"
	Parts                   // "split into K parts to join in order"
	JSONParts               // "its compact JSON is split into K parts to join in order"
	TextParts               // "its text is split into K parts to join in order"
)

// SplitHead is the first line of a chunk that came back split into
// smaller chunks, because Need tokens are over the Budget. Intro names
// what it holds; empty writes the short form, for a very tight budget.
// MaxFetch, when set, is what any fetch returns at most (Need is over
// it, so it comes back only in pieces).
//
//	> [chunk 2 of 5 of c_…: items 5–8 of 30, 9,000 tokens in full: over the budget of 4,000, so split into 3 chunks; a budget of at least 9,000 gets it in one piece]
//	> [chunk 2 of 5 of c_…: 9,000 tokens in full, over the budget of 400, so split into 30 chunks]
type SplitHead struct {
	N, Of    int
	Handle   string
	Intro    string
	Need     int
	Budget   int
	How      Pieces
	K        int
	MaxFetch int
}

func (x SplitHead) String() string {
	k := strconv.Itoa(x.K)
	var how string
	switch x.How {
	case Parts:
		how = "split into " + k + " parts to join in order"
	case JSONParts:
		how = "its compact JSON is split into " + k + " parts to join in order"
	case TextParts:
		how = "its text is split into " + k + " parts to join in order"
	default:
		how = "split into " + k + " chunks"
	}
	title := ChunkHead{N: x.N, Of: x.Of, Handle: x.Handle}.title()
	if x.Intro == "" {
		return "> [" + title + ": " + Thousands(x.Need) + " tokens in full, over the budget of " + Thousands(x.Budget) + ", so " + how + "]"
	}
	whole := "a budget of at least " + Thousands(x.Need) + " gets it in one piece"
	if x.MaxFetch > 0 {
		whole = "no fetch returns more than " + Thousands(x.MaxFetch) + " tokens, so it comes back only in pieces"
	}
	return "> [" + title + ": " + x.Intro + ", " + Thousands(x.Need) + " tokens in full: over the budget of " + Thousands(x.Budget) + ", so " + how + "; " + whole + "]"
}

// SubIndex opens the index of a split chunk's smaller chunks:
// "[chunks] 3 chunks:", or "[chunks] 3 parts:" for byte ranges.
type SubIndex struct {
	K     int
	Parts bool
}

func (x SubIndex) String() string {
	if x.Parts {
		return "[chunks] " + strconv.Itoa(x.K) + " parts:"
	}
	return "[chunks] " + strconv.Itoa(x.K) + " chunks:"
}

// SubChunk is one smaller chunk of a split chunk: its span (units, or
// "bytes A–B"), the tokens its fetch returns, and whether that is over
// the budget.
//
//	chunk 2: bytes 4,001–8,000, ≈1,990 tokens
type SubChunk struct {
	N      int
	Span   string
	Tokens int
	Over   bool
}

func (x SubChunk) String() string {
	s := "  chunk " + strconv.Itoa(x.N) + ": " + x.Span + ", ≈" + Thousands(x.Tokens) + " tokens"
	if x.Over {
		s += ", over budget"
	}
	return s
}

// SubFoot closes the index of a split chunk with the call that fetches
// its smaller chunks: "[/chunks] Get chunk N: CALL (no other arguments needed)".
type SubFoot struct{ Call string }

func (x SubFoot) String() string {
	return "[/chunks] Get chunk N: " + x.Call + " (no other arguments needed)"
}

// Index opens a chunk index: the Total units (Unit, plural) at Label,
// numbered from 1, in Chunks chunks, of which this response shows Shown
// and leaves out LeftOut. With detail levels (Levels) the shown units are
// counted by level (Full, Standard, Minimal); without, Cut counts those
// cut.
//
//	[chunks] 25 items at the root array, numbered 1–25, in 2 chunks; this response shows 13 of them (2 full, 6 standard, 5 minimal) and leaves out 12:
type Index struct {
	Total  int
	Unit   string
	Label  string
	Chunks int
	Shown  int
	Levels bool
	// Full, Standard and Minimal count shown units by level (Levels).
	Full, Standard, Minimal int
	Cut                     int // units cut (no Levels)
	LeftOut                 int
}

func (x Index) String() string {
	var b strings.Builder
	b.WriteString("[chunks] " + Plural(x.Total, Singular(x.Unit)))
	switch {
	case strings.HasPrefix(x.Label, "the diff"):
		b.WriteString(" in " + x.Label)
	case x.Label != "":
		b.WriteString(" at " + x.Label)
	}
	if x.Total == 1 {
		b.WriteString(", numbered 1")
	} else {
		b.WriteString(", numbered 1–" + strconv.Itoa(x.Total))
	}
	b.WriteString(", in " + Plural(x.Chunks, "chunk") + "; this response shows " + strconv.Itoa(x.Shown) + " of them")
	if !x.Levels && x.Cut > 0 {
		b.WriteString(" (" + strconv.Itoa(x.Cut) + " cut)")
	} else if x.Levels && x.Shown > 0 {
		var parts []string
		for _, p := range []struct {
			n    int
			name string
		}{{x.Full, "full"}, {x.Standard, "standard"}, {x.Minimal, "minimal"}} {
			if p.n > 0 {
				parts = append(parts, strconv.Itoa(p.n)+" "+p.name)
			}
		}
		b.WriteString(" (" + strings.Join(parts, ", ") + ")")
	}
	b.WriteString(" and leaves out " + strconv.Itoa(x.LeftOut) + ":")
	return b.String()
}

// IndexChunk is one chunk's line in a chunk index: its span, the tokens
// its fetch returns (0: not stated, nothing can fetch it) and whether
// that is over the fetch budget, a summary of its content, and what this
// response holds of it ([Runs]).
//
//	chunk 1: items 1–24, ≈17,900 tokens; state: 24 open; in this response: items 1–3 standard, item 4 full, items 5–24 left out
type IndexChunk struct {
	N       int
	Span    string
	Tokens  int
	Over    bool
	Summary string
	Runs    string
}

func (x IndexChunk) String() string {
	var b strings.Builder
	b.WriteString("  chunk " + strconv.Itoa(x.N) + ": " + x.Span)
	if x.Tokens > 0 {
		b.WriteString(", ≈" + Thousands(x.Tokens) + " tokens")
	}
	if x.Over {
		b.WriteString(", over budget")
	}
	if x.Summary != "" {
		b.WriteString("; " + x.Summary)
	}
	b.WriteString("; in this response: " + x.Runs)
	return b.String()
}

// Footing is how a chunk index closes.
type Footing int

const (
	// FetchWhole: chunk N whole by Call, a fetch returning up to Fetch
	// tokens; Over adds that a chunk over budget comes back smaller.
	FetchWhole Footing = iota
	// StoreDown: not retrievable right now; RawHint says what else to do.
	StoreDown
	// NothingStored: re-run with a larger budget.
	NothingStored
)

// IndexFoot closes a chunk index.
//
//	[/chunks] Get chunk N whole: terse chunk c_0123456789012345 N (no other arguments needed: a fetch returns up to 20,000 tokens)
type IndexFoot struct {
	How     Footing
	Call    string
	Fetch   int
	Over    bool
	RawHint string
}

func (x IndexFoot) String() string {
	switch x.How {
	case StoreDown:
		return "[/chunks] The rest is not retrievable right now (the chunk store is unavailable); " + x.RawHint + "."
	case NothingStored:
		return "[/chunks] Not stored: re-run with a larger budget to get more."
	}
	s := "[/chunks] Get chunk N whole: " + x.Call + " (no other arguments needed: a fetch returns up to " + Thousands(x.Fetch) + " tokens)"
	if x.Over {
		s += "; a chunk over budget comes back as smaller chunks, fetched the same way"
	}
	return s
}

// Gap stands inside a kept text for the source lines First–Last
// (numbered from 1) left out; Extra adds what they hold.
//
//	[… 118 lines left out: lines 3–120 …]
//	[… 1 line left out: line 7 …]
//	[… 40 lines left out: lines 120–159, +30/−10 …]
type Gap struct {
	First, Last int
	Extra       string
}

func (x Gap) String() string {
	extra := ""
	if x.Extra != "" {
		extra = ", " + x.Extra
	}
	if x.First == x.Last {
		return "[… 1 line left out: line " + strconv.Itoa(x.First) + extra + " …]"
	}
	return "[… " + strconv.Itoa(x.Last-x.First+1) + " lines left out: lines " + strconv.Itoa(x.First) + "–" + strconv.Itoa(x.Last) + extra + " …]"
}

// Cut is the marker ending a string shortened by N characters: "…[+N chars]".
func Cut(n int) string { return "…[+" + strconv.Itoa(n) + " chars]" }

// Run is a run of units A–B (1-based, inclusive) at one level of a
// response ("full", "standard", "minimal", "shown", "cut", "left out").
type Run struct {
	A, B  int
	Level string
}

// Runs writes what a response holds of a chunk's units, in order:
// "items 1–3 standard, item 4 full, items 5–6 left out"; one run over the
// whole chunk is "all full", or "none" when it is left out.
func Runs(unit string, runs []Run) string {
	if len(runs) == 1 {
		if runs[0].Level == "left out" {
			return "none"
		}
		return "all " + runs[0].Level
	}
	var b strings.Builder
	for i, r := range runs {
		if i > 0 {
			b.WriteString(", ")
		}
		if r.A == r.B {
			b.WriteString(Singular(unit))
		} else {
			b.WriteString(unit)
		}
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(r.A))
		if r.B > r.A {
			b.WriteString("–")
			b.WriteString(strconv.Itoa(r.B))
		}
		b.WriteByte(' ')
		b.WriteString(r.Level)
	}
	return b.String()
}

// Singular returns the singular of a unit name: "items" → "item".
func Singular(unit string) string { return strings.TrimSuffix(unit, "s") }

// Plural writes a count with its noun: "1 chunk", "3 chunks".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// Range names the units [a, b) (0-based) by their 1-based numbers:
// "items 5–8", "item 7".
func Range(unit string, a, b int) string {
	if b == a+1 {
		return Singular(unit) + " " + strconv.Itoa(a+1)
	}
	return unit + " " + strconv.Itoa(a+1) + "–" + strconv.Itoa(b)
}

// List names sorted 0-based unit indexes by their 1-based numbers,
// merging runs: "items 1–9, 14, 20–24", "item 7".
func List(unit string, idx []int) string {
	var b strings.Builder
	if len(idx) == 1 {
		b.WriteString(Singular(unit))
	} else {
		b.WriteString(unit)
	}
	b.WriteByte(' ')
	for j := 0; j < len(idx); {
		k := j
		for k+1 < len(idx) && idx[k+1] == idx[k]+1 {
			k++
		}
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(idx[j] + 1))
		if k > j {
			b.WriteString("–" + strconv.Itoa(idx[k]+1))
		}
		j = k + 1
	}
	return b.String()
}

// Thousands writes n with comma separators: 12,345.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
