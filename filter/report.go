package filter

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tree"
)

// Report describes one application of a [Rule]. It travels beside the
// data and is never mixed into it.
type Report struct {
	// Applied reports whether the filter ran and shaped the output. It is
	// false when the rule has no operation for this input, and on errors.
	Applied bool
	// Root is the JSON Pointer of the item array or object filtered (""
	// for the whole document); Detected tells whether it was detected
	// rather than configured; List whether it was an item array.
	Root     string
	Detected bool
	List     bool
	// Total is the number of items before filtering (1 for a single
	// object), Count the number in the output. TruncatedFrom is Total when
	// max_items cut the list, else 0.
	Total, Count  int
	TruncatedFrom int
	// FieldsOmitted counts the distinct fields left out: top-level fields
	// of the items that no select path takes whole (a path "user.login"
	// leaves the rest of "user" out), plus distinct key paths that exclude
	// removed.
	FieldsOmitted int
	// NullsDropped and EmptyDropped count members removed by drop_nulls
	// and drop_empty.
	NullsDropped, EmptyDropped int
	// Unmatched lists the select source paths that matched no item,
	// sorted.
	Unmatched []string
	// Lines and LinesKept count text lines before and after the text
	// filter.
	Lines, LinesKept int
	// OriginalBytes is the size of the input as compact JSON (or the input
	// text); ResultBytes the size of what the model reads (note included).
	OriginalBytes, ResultBytes int
	// Tokenizer names the counter of OriginalTokens and ResultTokens; all
	// three are zero values when no counter was given.
	Tokenizer                    string
	OriginalTokens, ResultTokens int
	// Err is set when the filter could not apply: a [*MissError], a
	// [*RootError] or a [*TemplateError]. The payload then passes
	// unfiltered (or, for a template, as filtered JSON) and the note says
	// so.
	Err error
}

// MarshalJSON writes the Report with snake_case names, for telemetry and
// `terse filter --report`; Err becomes its message.
func (r Report) MarshalJSON() ([]byte, error) {
	type jsonReport struct {
		Applied        bool     `json:"applied"`
		Root           string   `json:"root"`
		Detected       bool     `json:"root_detected"`
		List           bool     `json:"list"`
		Total          int      `json:"items_total"`
		Count          int      `json:"items_shown"`
		TruncatedFrom  int      `json:"items_truncated_from,omitempty"`
		FieldsOmitted  int      `json:"fields_omitted"`
		NullsDropped   int      `json:"nulls_dropped"`
		EmptyDropped   int      `json:"empty_dropped"`
		Unmatched      []string `json:"unmatched_select_paths,omitempty"`
		Lines          int      `json:"lines,omitempty"`
		LinesKept      int      `json:"lines_kept,omitempty"`
		OriginalBytes  int      `json:"original_bytes"`
		ResultBytes    int      `json:"result_bytes"`
		Tokenizer      string   `json:"tokenizer,omitempty"`
		OriginalTokens int      `json:"original_tokens,omitempty"`
		ResultTokens   int      `json:"result_tokens,omitempty"`
		Error          string   `json:"error,omitempty"`
	}
	jr := jsonReport{r.Applied, r.Root, r.Detected, r.List, r.Total, r.Count, r.TruncatedFrom, r.FieldsOmitted,
		r.NullsDropped, r.EmptyDropped, r.Unmatched, r.Lines, r.LinesKept, r.OriginalBytes, r.ResultBytes,
		r.Tokenizer, r.OriginalTokens, r.ResultTokens, ""}
	if r.Err != nil {
		jr.Error = r.Err.Error()
	}
	return json.Marshal(jr)
}

// MissError is a total select miss: items were objects, and none had any
// of the select paths. This usually means the root or the paths are wrong
// for this payload.
type MissError struct {
	Paths []string // the select source paths, sorted
}

func (e *MissError) Error() string {
	return "filter: no select path matched any item: " + strings.Join(e.Paths, ", ")
}

// RootError reports a configured root that the payload does not have.
type RootError struct {
	Root string
}

func (e *RootError) Error() string {
	return "filter: root " + strconv.Quote(e.Root) + " not found in payload"
}

// TemplateError reports a compact template that failed to execute.
type TemplateError struct {
	Err error
}

func (e *TemplateError) Error() string { return "filter: " + e.Err.Error() }

// Unwrap returns the text/template error.
func (e *TemplateError) Unwrap() error { return e.Err }

// The note wording below is API: models read it and golden files pin it.
// Change it only on purpose, with the goldens (go test ./filter -update).

// note builds the one-line declaration from its parts.
func (r *Rule) note(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	if r.spec.Recover != "" {
		parts = append(parts[:len(parts):len(parts)], r.spec.Recover)
	}
	return inband.Filtered{Parts: parts}.String()
}

func structParts(rep *Report) []string {
	var parts []string
	if rep.TruncatedFrom > 0 {
		parts = append(parts, "showing "+strconv.Itoa(rep.Count)+" of "+strconv.Itoa(rep.Total)+" items")
	}
	if rep.FieldsOmitted > 0 {
		s := plural(rep.FieldsOmitted, "field")
		if rep.List {
			s += " per item"
		}
		parts = append(parts, s+" omitted by config")
	}
	switch {
	case rep.NullsDropped > 0 && rep.EmptyDropped > 0:
		parts = append(parts, "null and empty fields dropped")
	case rep.NullsDropped > 0:
		parts = append(parts, "null fields dropped")
	case rep.EmptyDropped > 0:
		parts = append(parts, "empty fields dropped")
	}
	return parts
}

func textParts(st textStats) []string {
	var parts []string
	if st.dropped > 0 {
		parts = append(parts, strconv.Itoa(st.dropped)+" of "+plural(st.lines, "line")+" dropped by pattern")
	}
	if st.cut > 0 {
		of := " of " + plural(st.kept+st.cut, "line")
		switch {
		case st.head > 0 && st.tail > 0:
			parts = append(parts, "showing first "+strconv.Itoa(st.head)+" and last "+strconv.Itoa(st.tail)+of)
		case st.head > 0:
			parts = append(parts, "showing first "+strconv.Itoa(st.head)+of)
		default:
			parts = append(parts, "showing last "+strconv.Itoa(st.tail)+of)
		}
	}
	return parts
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// measure fills the size fields of res.Report: origLen is the input's
// size; orig returns its text, called only when tokens are counted.
func measure(res *Result, origLen int, orig func() string, opts *Options) {
	rep := &res.Report
	rep.OriginalBytes = origLen
	if opts == nil || opts.Counter == nil {
		n := len(res.Note)
		if n > 0 {
			n++
		}
		if res.IsText {
			n += len(res.Text)
		} else {
			n += tree.JSONLen(res.Value)
		}
		rep.ResultBytes = n
		return
	}
	out := res.Append(nil)
	rep.ResultBytes = len(out)
	rep.Tokenizer = opts.Counter.Name()
	rep.OriginalTokens = opts.Counter.Count(orig())
	rep.ResultTokens = opts.Counter.Count(string(out))
}
