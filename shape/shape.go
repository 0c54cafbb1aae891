package shape

import (
	"fmt"
	"slices"
	"strings"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toolname"
)

// Class is how much a shaping may change: the classes are ordered from
// the safest (None: untouched) to Elide.
type Class uint8

const (
	None     Class = iota // untouched
	Lossless              // the original follows by a documented rule
	Display               // what a terminal shows is kept
	Elide                 // declared, counted, recoverable elision
)

func (c Class) String() string {
	switch c {
	case Lossless:
		return "lossless"
	case Display:
		return "display"
	case Elide:
		return "elide"
	}
	return "none"
}

// ParseClass parses a class name: "lossless", "display", "elide" or
// "none".
func ParseClass(s string) (Class, error) {
	for c := None; c <= Elide; c++ {
		if c.String() == s {
			return c, nil
		}
	}
	return None, fmt.Errorf("shape: unknown class %q (want lossless, display, elide or none)", s)
}

// Defaults of [Options].
const (
	DefaultMargin   = 0.05
	DefaultMinBytes = 256
)

// Options configure shaping. The zero value shapes under every class,
// with DefaultMargin and DefaultMinBytes, counting with o200k_base, and
// elides nothing (Keep is nil).
type Options struct {
	// Counter counts tokens for the net-win gate. Nil means o200k_base.
	Counter tokens.Counter
	// Margin is the least share of the original's tokens a shaping must
	// save, after its header and markers, to be used: 0 means
	// DefaultMargin; a negative value means any saving.
	Margin float64
	// MinBytes: a shorter result is never shaped. 0 means DefaultMinBytes.
	MinBytes int
	// Ceiling is the most a shaping may change; None (the zero value)
	// means Elide.
	Ceiling Class
	// Tools are per-tool rules, the first whose Match (a path.Match glob)
	// matches the call's tool applies.
	Tools []ToolRule
	// PassLines are patterns of pass lines for runners the built-in
	// ones do not know, folded into counts like theirs.
	PassLines []PassLine
	// ReadForm is how a numbered read's numbers are written: ReadGutter
	// ("" means it: every number, unpadded), ReadTab, ReadSparse or
	// ReadRange.
	ReadForm string
	// Keep stores the original of an elided text and returns the handle
	// and fetch command of its chunks, whose line ranges are given
	// (1-based, inclusive): chunk N of the handle is ranges[N-1]. Nil
	// means nothing is elided.
	Keep func(text string, ranges [][2]int) (fetch string, err error)
}

// ToolRule is the shaping policy of the tools whose names match Match.
type ToolRule struct {
	Match   string  // glob (path.Match) on the tool name
	Off     bool    // no shaping for these tools
	Ceiling Class   // None: the Options' ceiling
	Margin  float64 // 0: the Options' margin
}

// Call is what is known about the call that produced a result.
type Call struct {
	Tool    string // the tool's name: Read, Bash, Grep, Glob, shell, mcp__server__tool…
	Input   []byte // the call's arguments as JSON, if known
	WorkDir string // the agent's working directory, if known
}

// Anchors counts the anchors of an original (paths, file:line references,
// error and verdict lines, identifiers) and how many a shaping kept.
type Anchors struct {
	Total int `json:"total"`
	Kept  int `json:"kept"`
	Lost  int `json:"lost"`
}

// Result is what [Shape] returns.
type Result struct {
	// Text is the shaped text, or the input when Class is None.
	Text string
	// Shape is the detected shape ("read", "paths", "grep", "log",
	// "test", "git", "build"), or "" when it is unknown.
	Shape string
	Class Class
	// Rules names the rules applied, in order.
	Rules []string
	// Tokens and ShapedTokens are the input's and the shaped text's
	// tokens; 0 when the gate did not count them.
	Tokens, ShapedTokens int
	// Anchors are counted for an elision (which is used only when it
	// loses none). A lossless or display shaping keeps every anchor by
	// construction (it is verified by expanding it) and does not count
	// them.
	Anchors Anchors
	// Why says why a result was left untouched: "off", "unknown shape",
	// "short", "no gain", "no rule applies".
	Why string
	// Fetch is the fetch command of an elision's chunks (Options.Keep).
	Fetch string
}

// Off reports whether the options turn shaping off for tool (a rule of
// Tools).
func (o *Options) Off(tool string) bool {
	_, _, off := o.policy(tool)
	return off
}

func (o *Options) policy(tool string) (ceiling Class, margin float64, off bool) {
	ceiling, margin = o.Ceiling, o.Margin
	for _, r := range o.Tools {
		if toolname.Match(r.Match, tool) {
			if r.Off {
				return None, 0, true
			}
			if r.Ceiling != None {
				ceiling = r.Ceiling
			}
			if r.Margin != 0 {
				margin = r.Margin
			}
			break
		}
	}
	if ceiling == None {
		ceiling = Elide
	}
	if margin == 0 {
		margin = DefaultMargin
	}
	return ceiling, max(margin, 0), false
}

// Shape shapes text, the result of call, under o (nil: the zero Options).
// Output is deterministic: the same text, call and options give the same
// bytes.
func Shape(text string, call Call, o *Options) Result {
	if o == nil {
		o = &Options{}
	}
	ceiling, margin, off := o.policy(call.Tool)
	if off {
		return Result{Text: text, Why: "off"}
	}
	minBytes := o.MinBytes
	if minBytes <= 0 {
		minBytes = DefaultMinBytes
	}
	kind := Detect(text, call)
	if kind == "" {
		return Result{Text: text, Why: "unknown shape"}
	}
	if len(text) < minBytes {
		return Result{Text: text, Shape: kind, Why: "short"}
	}
	if inband.HasRefLines(text) {
		// terse expand refuses a text with a line reference (one stands
		// for lines it does not hold): a text that holds one as it is
		// stays as it is.
		return Result{Text: text, Shape: kind, Why: "holds a line reference"}
	}
	// Git output (commit SHAs, branch names, a detached HEAD) is shaped
	// losslessly or not at all; a compiler's or linter's keeps what a
	// terminal shows at least: every error line and file:line.
	switch {
	case kind == "git":
		ceiling = min(ceiling, Lossless)
	case kind == "build":
		ceiling = min(ceiling, Display)
	}
	c := o.Counter
	if c == nil {
		c = tokens.O200kBase()
	}
	res := Result{Text: text, Shape: kind}
	cand := candidates(text, kind, call, ceiling, o)
	if len(cand) == 0 {
		res.Why = "no rule applies"
		return res
	}
	return choose(res, cand, text, c, margin, o)
}

// candidates returns the shapings of text (of kind, the result of call)
// up to ceiling: the elisions first, then the lossless ones.
func candidates(text, kind string, call Call, ceiling Class, o *Options) []candidate {
	var cand []candidate
	if kind == "test" && ceiling >= Elide && o.Keep != nil {
		if e, ok := elideTest(text, o.PassLines); ok {
			cand = append(cand, e)
		}
	}
	if kind == "log" && ceiling >= Elide && o.Keep != nil {
		if e, ok := elideLog(text); ok {
			cand = append(cand, e)
		}
	}
	if s, ok := lossless(text, kind, call, ceiling, o.ReadForm); ok {
		cand = append(cand, s)
		if slices.Contains(s.rules, "relative") && (kind == "paths" || kind == "grep" || s.relSaved < relRetry) {
			// Paths written relative cost their base's declaration: the
			// shaping without it may be smaller (the smaller is used).
			abs := call
			abs.WorkDir = ""
			if s2, ok := lossless(text, kind, abs, ceiling, o.ReadForm); ok {
				cand = append(cand, s2)
			}
		}
	}
	return cand
}

// choose returns res with the first candidate that saves the margin: an
// elision that loses no anchor and whose elided lines are kept, or else
// the smallest lossless shaping; res says "no gain" when none does.
func choose(res Result, cand []candidate, text string, c tokens.Counter, margin float64, o *Options) Result {
	res.Tokens = c.Count(text)
	var anchors []anchor
	for _, s := range cand {
		n := c.Count(s.text)
		if float64(n) > float64(res.Tokens)*(1-margin) || n >= res.Tokens {
			continue
		}
		if s.class == Elide {
			if anchors == nil {
				anchors = findAnchors(text)
			}
			lost := s.lost(anchors)
			if lost > 0 {
				continue // the next safer class
			}
			fetch, err := o.Keep(text, s.ranges)
			if err != nil {
				continue
			}
			s.text = strings.Replace(s.text, fetchPlaceholder, fetch, -1)
			n = c.Count(s.text)
			if float64(n) > float64(res.Tokens)*(1-margin) || n >= res.Tokens {
				continue
			}
			res.Fetch = fetch
			res.Anchors = Anchors{Total: len(anchors), Kept: len(anchors)}
		}
		if s.class != Elide && res.Class != None && n >= res.ShapedTokens {
			continue // a smaller lossless shaping came first
		}
		res.Text, res.Class, res.Rules, res.ShapedTokens = s.text, s.class, s.rules, n
		if s.class == Elide {
			return res
		}
	}
	if res.Class != None {
		return res
	}
	res.Why = "no gain"
	return res
}

// sharedBase reports whether every path of a list (after a first line
// that is not one) opens with base: its tree will open with it.
func sharedBase(lines []string, base string) bool {
	a := 0
	if len(lines) > 0 && !strings.Contains(lines[0], "/") {
		a = 1
	}
	b := region(lines, a)
	for _, l := range lines[a:b] {
		if !strings.HasPrefix(l, base) {
			return false
		}
	}
	return b > a
}

// relRetry: paths written relative that save fewer bytes than this
// (after their rule) are also tried absolute, and the smaller shaping is
// used; a path list is always tried both ways (its tree may share the
// base as well).
const relRetry = 1024

// candidate is one shaping of a text.
type candidate struct {
	text   string
	class  Class
	rules  []string
	ranges [][2]int // Elide: the chunks' line ranges of the original
	// relSaved is the bytes writing paths relative saved, less its
	// rule's.
	relSaved int
	// lost counts the anchors an elision does not keep (Elide only).
	lost func(anchors []anchor) int
}

// lossless is the lossless (or, when the text needs it and ceiling
// allows, display) shaping of text as kind, verified by expanding it.
func lossless(text, kind string, call Call, ceiling Class, form string) (candidate, bool) {
	body := text
	class := Lossless
	var rules []string
	var names []string // the rules' short names for the Report
	if needsDisplay(text) {
		if ceiling < Display {
			return candidate{}, false
		}
		d, ok := display(text)
		if !ok {
			return candidate{}, false
		}
		body, class = d, Display
		rules = append(rules, ruleDisplay)
		names = append(names, ruleName(inband.Terminal))
	}
	lines := strings.Split(body, "\n")
	relSaved := 0
	// Each rule is kept only when undoing it gives back its input
	// exactly: a text that happens to hold what a rule writes is left as
	// it is. Undoing the rules in reverse then gives the body back (each
	// works on lines, none writes a newline, and their header wording is
	// parsed back below).
	try := func(r string, out []string, ok bool) {
		if !ok {
			return
		}
		if rule, ok := verify(r, out, lines); ok {
			lines = out
			rules = append(rules, r)
			names = append(names, ruleName(rule))
		}
	}
	switch kind {
	case "read":
		for _, g := range gutters {
			n := len(rules)
			if form == ReadSparse || form == ReadRange {
				try(readForm(lines, g, form))
			}
			if len(rules) == n && form == ReadTab {
				try(unpad(lines, g, "\t"))
			}
			if len(rules) == n {
				try(unpad(lines, g, g.sep))
			}
			if len(rules) > n {
				break
			}
		}
	case "paths", "grep", "log", "test", "git", "build":
		n, before := size(lines), len(rules)
		if base := relBase(lines, call.WorkDir); base != "" && !(kind == "paths" && sharedBase(lines, base)) {
			// (A tree of absolute paths that all share the base writes
			// it once, as a directory, and costs no rule.)
			try(relApply(lines, base))
		}
		if len(rules) > before {
			relSaved = n - size(lines) - len(rules[before])
		}
		switch kind {
		case "paths":
			try(tree(lines))
		case "grep":
			try(group(lines))
		}
	}
	try(fold(lines))
	if len(rules) == 0 {
		return candidate{}, false
	}
	h := header(class, rules)
	if v, err := inband.Parse(h); err != nil || !equalLines(v.(inband.Shaping).Rules, rules) {
		return candidate{}, false
	}
	return candidate{text: h + "\n" + strings.Join(lines, "\n"), class: class, rules: names, relSaved: relSaved}, true
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ruleName is the short name of a rule for the Report.
func ruleName(rule inband.Rule) string {
	switch x := rule.(type) {
	case inband.Named:
		switch x {
		case inband.Terminal:
			return "display"
		case inband.Grouped:
			return "group"
		case inband.RepeatsFolded:
			return "fold"
		}
	case inband.Relative:
		return "relative"
	case inband.PathTree:
		return "tree"
	case inband.Unpadded:
		if x.To != x.Sep {
			return ReadTab
		}
		return "gutter"
	case inband.ReadForm:
		if x.Sparse {
			return ReadSparse
		}
		return ReadRange
	}
	return rule.String()
}
