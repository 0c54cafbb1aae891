package inband

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// lines are in-band lines as terse writes them (from the goldens of the
// packages that write them).
var lines = []string{
	"> [id: 3f2a1c9d]",
	"> [ref: 3f2a1c9d, byte-identical]",
	`> [ref: toolu_01ABC (Bash "git status"), byte-identical]`,
	"> [near-ref: 3f2a1c9d, status: pending→success]",
	`> [near-ref: 3f2a1c9d, a.b: "x, y"→2, c: null→true]`,
	"> [budget raised from 20 to 64 tokens: the least that declares what is left out]",
	"> [JSON document 2 of 3]",
	"> [filtered: showing 10 of 120 items; 3 fields omitted]",
	"> [filter failed: root data not found; output is unfiltered]",
	"> [filter failed: no select path matched; output is unfiltered]",
	brake,
	`> [levels: full = as in the source; standard = urls, avatars, node ids, extra timestamps and empty values dropped, long strings cut at "…[+N chars]"; minimal = identity fields only, long strings cut at "…[+N chars]"; missing or blank fields of a shortened item were left out]`,
	"> [levels: full = as in the source; minimal = identity fields only; missing or blank fields of a shortened item were left out]",
	"> [levels: full = the file's whole diff; standard = hunks over 8 lines cut to their first 5 and last 2, later hunks after 20 lines left out; minimal = the file's header line and +/− counts; every cut is marked where it is]",
	"> [levels: full = the file's whole diff; minimal = the file's header line and +/− counts; every cut is marked where it is]",
	"> [left out of /items: items 11–14, 16–120 (114 of 120 items)]",
	"> [left out of the root object: members 2, 5 (2 of 5 members)]",
	"> [detail /items: items 11–14 standard (dropped urls); item 15 minimal (identity fields only); the rest full]",
	"> [detail /items: item 15 minimal (identity fields only)]",
	"> [114 of 120 items left out, 5 shortened: get all 120 items whole with: terse chunk c_0123456789012345 1; a fetch returns up to 20,000 tokens]",
	"> [all 1 items left out, too large for this budget: get item 1 with: terse chunk c_0123456789012345 1, over budget: it comes back as smaller chunks, fetched the same way; a fetch returns up to 20,000 tokens]",
	"> [all 2 items left out, too large for this budget: get chunk N of 2 whole with: terse chunk c_0123456789012345 N; chunk 1: item 1, chunk 2: item 2 (over budget); a fetch returns up to 20,000 tokens]",
	"> [23 of 25 items shortened: not retrievable right now (the chunk store is unavailable); re-run with a larger budget to see more]",
	"> [92 of 118 lines left out: not stored; re-run with a larger budget to see them]",
	"> [3 of 118 lines cut: not stored; re-run with a larger budget to see them]",
	"> [chunk 2 of 5 of c_0123456789012345: items 5–8 of 30 at the root array, in full]",
	"> [chunk 1 of 3 of c_0123456789012345: bytes 1–4,000 of 9,100 of item 7, in full (join the parts in order)]",
	"> [chunk 2 of 5 of c_0123456789012345: items 5–8 of 30, 9,000 tokens in full: over the budget of 4,000, so split into 3 chunks; a budget of at least 9,000 gets it in one piece]",
	"> [chunk 2 of 5 of c_0123456789012345: item 5 of 30, 90,000 tokens in full: over the budget of 4,000, so its compact JSON is split into 30 parts to join in order; no fetch returns more than 20,000 tokens, so it comes back only in pieces]",
	"> [chunk 2 of 5 of c_0123456789012345: 9,000 tokens in full, over the budget of 400, so split into 30 chunks]",
	"[chunks] 3 parts:",
	"[chunks] 12 chunks:",
	"  chunk 2: bytes 4,001–8,000, ≈1,990 tokens",
	"  chunk 3: items 9–12, ≈5,000 tokens, over budget",
	"[/chunks] Get chunk N: terse chunk c_0123456789012345 N (no other arguments needed)",
	"[chunks] 25 items at the root array, numbered 1–25, in 2 chunks; this response shows 13 of them (2 full, 6 standard, 5 minimal) and leaves out 12:",
	"[chunks] 1 file in the diff, numbered 1, in 1 chunk; this response shows 0 of them and leaves out 1:",
	"[chunks] 300 lines, numbered 1–300, in 3 chunks; this response shows 40 of them (2 cut) and leaves out 260:",
	"  chunk 1: items 1–24, ≈17,900 tokens; state: 24 open; in this response: items 1–3 standard, item 4 full, items 5–24 left out",
	"  chunk 2: item 25, ≈31,100 tokens, over budget; state: 1 open; in this response: none",
	"  chunk 3: lines 201–300; in this response: all shown",
	"[/chunks] Get chunk N whole: terse chunk c_0123456789012345 N (no other arguments needed: a fetch returns up to 20,000 tokens); a chunk over budget comes back as smaller chunks, fetched the same way",
	"[/chunks] Get chunk N whole: terse chunk c_0123456789012345 N (no other arguments needed: a fetch returns up to 20,000 tokens)",
	"[/chunks] The rest is not retrievable right now (the chunk store is unavailable); re-run with a larger budget to see more.",
	"[/chunks] Not stored: re-run with a larger budget to get more.",
	"[… 118 lines left out: lines 3–120 …]",
	"[… 1 line left out: line 7 …]",
	"[… 40 lines left out: lines 120–159, +30/−10 …]",
	"> [display: terminal view]",
	`> [lossless: "\t" numbers unpadded to width 6]`,
	`> [lossless: "→" numbers unpadded to width 6 and followed by "\t"]`,
	`> [lossless: "→" numbers unpadded to width 6]`,
	`> [lossless: ./ = "/home/dev/project/"; repeats folded]`,
	`> [lossless: ./ = "/a; b/"; paths as a tree from line 1]`,
	`> [lossless: lines 1–16 follow without their "\t" numbers (width 6)]`,
	`> [lossless: lines 1–18 follow without their "→" numbers (width 6)]`,
	`> [lossless: lines 1–18 numbered "→" on the first, the last and every 10th only (width 6)]`,
	"> [lossless: matches grouped by file]",
	"> [lossless: paths as a tree from line 1]",
	"> [display: terminal view; repeats folded]",
	"> [elided: long log, first and last 30 lines and every problem line with 2 either side kept, 3 runs (71 of 520 lines kept); get chunk N whole: terse chunk c_7960818381905120 N]",
	"> [elided: passing tests folded into counts, 1 run (12 of 36 lines kept); get chunk N whole: terse chunk c_9252573644687834 N]",
	"> [elided: passing tests folded into counts, 3 runs (41 of 58 lines kept); get chunk N whole: terse chunk c_0123456789abcdef N]",
	"[… 24 lines left out: lines 3–26 (12 tests passed); chunk 2 …]",
	"[… 164 lines left out: lines 135–298; chunk 4 …]",
	"[… 12 lines left out: lines 22–33 (11 tests passed, 1 test skipped); chunk 2 …]",
	"[… same line 3 more times …]",
	"[… same line 12 more times …]",
	"> [stale: result of Read call toolu_01 (file_path=/src/a.go) left out; Edit call toolu_03 (file_path=/src/a.go) changed the file since; read it again for its current content]",
	"> [applied: 1746 bytes of content left out of Write call toolu_02 (file_path=/src/a.rs), which succeeded; read the file for its current content]",
	"> [applied: 9 bytes of new_string left out of tool call toolu_02, which succeeded; read the file for its current content]",
	"> [elided: result of Bash call toolu_04 (command=cargo build), 2576 bytes, left out 3 requests later; `terse chunk --session api-2493a9190d9eb102 c_7264571674747575 1` prints it]",
	"> [elided: result of Grep call toolu_05 (pattern=a, b), 900 bytes, left out 1 requests later; call it again to see it]",
	"> [trimmed: result of Grep call toolu_01 (pattern=p0); call it again to see it]",
	"> [trimmed: result of mcp__github__list_issues call toolu_04; call it again to see it]",
	"> [trimmed: result of Bash call toolu_16 (command=cat $(ls)); not recoverable: the call may have side effects, do not repeat it]",
	"> [trimmed: 9 earlier tool calls and their results left out (Read ×5, Bash ×4); call a tool again to see its result]",
	"> [trimmed: 20 earlier tool calls and their results left out (a ×5, b ×4, c ×3, d ×2, e ×2, f ×2, …); calls that only read can be made again, the others' results are not recoverable]",
	"> [the result of Read call toolu_01 (file_path=/src/a.go) follows, as sent]",
}

func TestParseLines(t *testing.T) {
	for _, l := range lines {
		v, err := Parse(l)
		if err != nil {
			t.Errorf("Parse(%q): %v", l, err)
			continue
		}
		if got := v.String(); got != l {
			t.Errorf("Parse(%q).String() = %q", l, got)
		}
	}
	for _, l := range []string{"", "> [", "> [nope]", "[chunks] x", "plain text", "> [id: x] y",
		"[… same line 0 more times …]", "[… same line 03 more times …]", "[… same line -3 more times …]", "> [lossless: a; ]", "> [elided: x]"} {
		if v, err := Parse(l); err == nil {
			t.Errorf("Parse(%q) = %#v, want an error", l, v)
		}
	}
}

// TestWriteParse writes typed values and reads them back.
func TestWriteParse(t *testing.T) {
	vals := []Line{
		ID{"a1"}, Ref{"a1"}, RefLines{"a1", 1, 1}, RefLines{`toolu_1 (Read "a, lines 2–3.go")`, 12, 80}, NearRef{"a1", []Change{{"x", "1", "2"}, {"y.z", `"a, b"`, "null"}}},
		BudgetRaised{1, 70}, JSONDoc{1, 2}, Filtered{[]string{"a", "b"}}, FilterFailed{FilterNoMatch}, FilterFailed{FilterRootMissing("/data")},
		Brake{}, Levels{"s", ""}, Levels{"", "m"}, Levels{"s", "m"}, DiffLevels{true, false}, DiffLevels{false, true},
		LeftOut{"/items", "items 1–3", 3, 10, "items"},
		Detail{Label: "/x", Standard: "item 1", StandardNote: "s", RestFull: true},
		Detail{Label: "/x", Standard: "item 1", StandardNote: "s", Minimal: "items 2–3", MinimalNote: "m"},
		Overflow{What: Elided{Skipped: 2, Short: 1, Total: 9, Unit: "lines", Cut: true}, How: NotStored},
		Overflow{What: Elided{Short: 4, Total: 9, Unit: "items"}, How: Unavailable, RawHint: "re-run"},
		Overflow{What: Elided{Skipped: 9, Total: 9, Unit: "items"}, How: OneChunk, Get: "all 9 items", Call: "terse chunk c_1 1", Fetch: 1234},
		Overflow{What: Elided{Skipped: 3, Total: 9, Unit: "items"}, How: ByChunk, Chunks: 2, Call: "c N", List: ChunkList([]ChunkRange{{1, "items 1–4", false}, {2, "items 5–9", true}}), Fetch: 100},
		ChunkHead{1, 2, "c_1", "the document", false}, ChunkHead{1, 2, "c_1", "bytes 1–2 of 9 of item 1", true},
		SplitHead{N: 1, Of: 2, Handle: "c_1", Intro: "items 1–9 of 9", Need: 5000, Budget: 1000, How: JSONParts, K: 6, MaxFetch: 2000},
		SplitHead{N: 1, Of: 2, Handle: "c_1", Need: 5000, Budget: 1000, How: TextParts, K: 6},
		SubIndex{3, true}, SubChunk{1, "bytes 1–9", 12, true}, SubFoot{"x N"},
		Index{Total: 9, Unit: "items", Label: "/a", Chunks: 2, Shown: 4, Levels: true, Full: 1, Minimal: 3, LeftOut: 5},
		Index{Total: 1, Unit: "files", Label: "the diff", Chunks: 1, Shown: 1, Cut: 1},
		IndexChunk{N: 1, Span: "items 1–4", Tokens: 1200, Summary: "state: 4 open", Runs: Runs("items", []Run{{1, 2, "full"}, {3, 4, "left out"}})},
		IndexFoot{How: FetchWhole, Call: "c N", Fetch: 20000, Over: true}, IndexFoot{How: StoreDown, RawHint: "r"}, IndexFoot{How: NothingStored},
		Gap{First: 3, Last: 3}, Gap{First: 3, Last: 9, Extra: "+1/−2"},
		Shaping{"lossless", []string{Unpadded{"→", 6, "\t"}.String(), Relative{`/a; "b"/`}.String(), string(RepeatsFolded)}},
		Shaping{"display", []string{string(Terminal), ReadForm{true, 1, 250, "→", 6}.String()}},
		ElidedRuns{ElidedTests, 1, 12, 36, "terse chunk c_1 N"}, ElidedRuns{ElidedLog(30, 2), 3, 71, 520, "x"},
		Folded{3, 26, "12 tests passed", 2}, Folded{3, 3, "", 1}, Repeat{1}, Repeat{1234},
		Stale{ToolCall{"Read", "t1", "file_path=a.go"}, ToolCall{"Edit", "t2", "file_path=a.go"}},
		Applied{12, "old_string", ToolCall{"Edit", "t2", "file_path=a (b).go"}}, Applied{3, "content", ToolCall{"Write", "t2", ""}},
		ElidedResult{ToolCall{"Bash", "t4", "command=ls, -la"}, 2000, 3, "terse chunk c_1 1"}, ElidedResult{ToolCall{"tool", "t4", ""}, 1, 1, ""},
		Trimmed{ToolCall{"Bash", "t1", "command=rm x; y"}, false}, Trimmed{ToolCall{"Read", "", ""}, true},
		Dropped{N: 3, Tools: []ToolCount{{"Read", 2}, {"Bash", 1}}, Writes: true}, Dropped{N: 9, Tools: []ToolCount{{"a", 1}}, More: true},
		Resent{ToolCall{"Read", "t1", "file_path=a.go"}},
	}
	for _, v := range vals {
		got, err := Parse(v.String())
		if err != nil {
			t.Errorf("Parse(%q): %v", v, err)
			continue
		}
		if !reflect.DeepEqual(got, v) {
			t.Errorf("Parse(%q) = %#v, want %#v", v, got, v)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct{ text, doc, notes string }{
		{"a\nb", "a\nb", ""},
		{"a\n> [x: y]\n", "a", "> [x: y]\n"},
		{"> [x: y]\na", "", "> [x: y]\na"},
		{"a\n[chunks] 3 parts:\n", "a", "[chunks] 3 parts:\n"},
	} {
		doc, notes := Split(c.text)
		if doc != c.doc || notes != c.notes {
			t.Errorf("Split(%q) = %q, %q", c.text, doc, notes)
		}
	}
	var offs []int
	for k := range Notes("a\n> [1]\nb\n> [2]") {
		offs = append(offs, k)
	}
	if !reflect.DeepEqual(offs, []int{2, 10}) {
		t.Errorf("Notes offsets %v", offs)
	}
}

func TestFamily(t *testing.T) {
	for text, want := range map[string]string{
		"> [ref: a, byte-identical]\nx": "ref", "> [ref: byte-identical to the result of x above]": "ref",
		"> [id: a]": "id", "> [x]": "", "ref: a": "", "> [a\nb: c]": "",
	} {
		if got := Family(text); got != want {
			t.Errorf("Family(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestRunsAndLists(t *testing.T) {
	if got := List("items", []int{0, 1, 2, 8, 13, 14}); got != "items 1–3, 9, 14–15" {
		t.Error(got)
	}
	if got := Range("items", 6, 7); got != "item 7" {
		t.Error(got)
	}
	runs := []Run{{1, 3, "standard"}, {4, 4, "full"}, {5, 9, "left out"}}
	s := Runs("items", runs)
	if s != "items 1–3 standard, item 4 full, items 5–9 left out" {
		t.Error(s)
	}
	back, err := ParseRuns(s, 1, 9)
	if err != nil || !reflect.DeepEqual(back, runs) {
		t.Errorf("ParseRuns = %v, %v", back, err)
	}
	if Thousands(1234567) != "1,234,567" || Number("1,234,567") != 1234567 {
		t.Error("thousands")
	}
}

// FuzzParse: every line Parse reads is written back byte for byte, and
// reads back to the same value (parse(write(v)) == v).
func FuzzParse(f *testing.F) {
	for _, l := range lines {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		v, err := Parse(line)
		if err != nil {
			return
		}
		s := v.String()
		if s != line {
			t.Fatalf("Parse(%q).String() = %q", line, s)
		}
		w, err := Parse(s)
		if err != nil || !reflect.DeepEqual(v, w) {
			t.Fatalf("Parse(write(%#v)) = %#v, %v", v, w, err)
		}
	})
}

// FuzzRoundTrip writes values built from the fuzzer's fields and reads
// them back: parse(write(v)) == v.
func FuzzRoundTrip(f *testing.F) {
	f.Add("c_0123456789012345", "items 1–3", 3, 10, 2000)
	f.Add("a", "lines 2–9", 0, 1, 5)
	f.Fuzz(func(t *testing.T, word, span string, a, b, c int) {
		if a < 0 || b < 1 || c < 1 || strings.Contains(word, " ") || !plain(word) || !plain(span) || span == "" {
			return
		}
		vals := []Line{
			ID{word}, BudgetRaised{a, b}, JSONDoc{a, b},
			ChunkHead{N: a, Of: b, Handle: word, Where: span},
			SubChunk{N: a, Span: span, Tokens: c},
			IndexFoot{How: FetchWhole, Call: word + " N", Fetch: c},
			Gap{First: b, Last: b + a},
			Overflow{What: Elided{Skipped: b, Total: b, Unit: "items"}, How: OneChunk, Get: "all " + span, Call: word, Fetch: c},
			SplitHead{N: a, Of: b, Handle: word, Intro: span, Need: c, Budget: b, How: Parts, K: a},
			Shaping{"lossless", []string{Relative{word + "; " + span}.String(), PathTree{b}.String(), ReadForm{a%2 == 0, b, b + c, word, 1 + a%32}.String()}},
			ElidedRuns{What: span, Runs: b, Kept: a, Total: c, Call: word + " N"},
			Folded{First: b, Last: b + a, What: span, Chunk: c}, Repeat{b},
			Stale{ToolCall{word, word, span}, ToolCall{word, word, ""}},
			Applied{a, word, ToolCall{word, word, span}},
			ElidedResult{ToolCall{word, word, span}, b, c, word + " " + span}, ElidedResult{ToolCall{word, word, ""}, a, b, ""},
			Trimmed{ToolCall{word, word, span}, a%2 == 0}, Resent{ToolCall{word, word, span}},
			Dropped{N: a, Tools: []ToolCount{{word, b}, {span, c}}, More: a%2 == 0, Writes: b%2 == 0},
		}
		for _, v := range vals {
			got, err := Parse(v.String())
			if err != nil {
				t.Fatalf("Parse(%q): %v", v, err)
			}
			if !reflect.DeepEqual(got, v) {
				t.Fatalf("Parse(%q) = %#v, want %#v", v, got, v)
			}
		}
	})
}

// plain reports whether s is a word or span the writers would use:
// letters, digits and "–", words separated by single spaces.
func plain(s string) bool {
	for _, w := range strings.Split(s, " ") {
		if w == "" || strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_–") != "" {
			return false
		}
	}
	return true
}

func TestChunkListAndSpan(t *testing.T) {
	cs := []ChunkRange{{1, "items 1–24", false}, {2, "item 25", true}, {3, "files 1–2 (lines 1–80)", false}}
	back, err := ParseChunkList(ChunkList(cs))
	if err != nil || !reflect.DeepEqual(back, cs) {
		t.Errorf("ParseChunkList = %v, %v", back, err)
	}
	if u, a, b, ok := ParseSpan("bytes 1–4,000 of 9,100 of item 7"); !ok || u != "byte" || a != 1 || b != 4000 {
		t.Error(u, a, b, ok)
	}
	if !IsCut("abc"+Cut(12)) || IsCut("abc") {
		t.Error("IsCut")
	}
}

// TestRules writes every kind of shaping rule and reads it back.
func TestRules(t *testing.T) {
	for _, r := range []Rule{
		Terminal, Grouped, RepeatsFolded,
		Unpadded{"→", 6, "→"}, Unpadded{"\t", 6, "\t"}, Unpadded{"→", 6, "\t"},
		PathTree{1}, PathTree{12}, Relative{"/home/dev/project/"}, Relative{`/a; "b"/`},
		ReadForm{true, 1, 250, "→", 6}, ReadForm{false, 0, 16, "\t", 6},
	} {
		got, err := ParseRule(r.String())
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Errorf("ParseRule(%q) = %#v, %v", r, got, err)
		}
	}
	if s := (Unpadded{Sep: "→", Width: 6}).String(); s != `"→" numbers unpadded to width 6` {
		t.Errorf("Unpadded without To = %q", s)
	}
	for r, unknown := range map[string]bool{
		"bogus rule": true, "paths as a tree from line 0": false, "paths as a tree from line 01": false,
		`./ = "x`: false, `lines 2–1 follow without their "→" numbers (width 6)`: false,
		`lines 1–2 follow without their "" numbers (width 6)`: false, `"→" numbers unpadded to width 33`: false,
	} {
		_, err := ParseRule(r)
		var re *RuleError
		if !errors.As(err, &re) || re.Unknown != unknown {
			t.Errorf("ParseRule(%q) = %v, want unknown %v", r, err, unknown)
		}
	}
}

// TestRepeatAppend: Append and Len agree with String, and ParseRepeat
// reads what they write.
func TestRepeatAppend(t *testing.T) {
	for _, n := range []int{1, 9, 10, 99, 100, 123456789, 1 << 30} {
		x := Repeat{n}
		if b := x.Append([]byte("a")); string(b) != "a"+x.String() || x.Len() != len(x.String()) {
			t.Errorf("Repeat{%d}: Append %q, Len %d, String %q", n, b, x.Len(), x)
		}
		if got, ok := ParseRepeat(x.String()); !ok || got != x {
			t.Errorf("ParseRepeat(%q) = %v, %v", x, got, ok)
		}
	}
	if n := testing.AllocsPerRun(100, func() { ParseRepeat("[… same line 42 more times …]") }); n != 0 {
		t.Errorf("ParseRepeat allocates %v times", n)
	}
}

// FuzzRule: every rule ParseRule reads is written back byte for byte.
func FuzzRule(f *testing.F) {
	for _, l := range lines {
		if v, err := Parse(l); err == nil {
			if sh, ok := v.(Shaping); ok {
				for _, r := range sh.Rules {
					f.Add(r)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, r string) {
		x, err := ParseRule(r)
		if err != nil {
			return
		}
		if u, ok := x.(Unpadded); ok && u.To == "" {
			t.Fatalf("ParseRule(%q): Unpadded without To", r)
		}
		if s := x.String(); s != r {
			t.Fatalf("ParseRule(%q).String() = %q", r, s)
		}
	})
}
