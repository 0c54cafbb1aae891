package terse

import (
	"strings"

	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/tree"
)

// Report describes what a Pipeline did to one result. Token figures are
// counts of the named tokenizer; the baseline (RawTokens) is the input as
// compact JSON (or the input text), never pretty JSON.
type Report struct {
	Tokenizer    string  `json:"tokenizer"`
	Exact        bool    `json:"exact"` // the tokenizer is a real BPE, not an estimate
	Tool         string  `json:"tool,omitempty"`
	Budget       int     `json:"budget"`
	RawTokens    int     `json:"raw_tokens"`
	OutputTokens int     `json:"output_tokens"`
	RawChars     int     `json:"raw_chars"`    // bytes of compact JSON (or text) in
	OutputChars  int     `json:"output_chars"` // bytes out
	Ratio        float64 `json:"ratio"`        // output_tokens / raw_tokens
	Kind         string  `json:"kind"`         // json, text or diff
	Format       string  `json:"format"`       // json, toon, auto, text, csv_from_md or hint
	Truncated    bool    `json:"truncated"`
	Filtered     bool    `json:"filtered,omitempty"`
	Dedup        bool    `json:"dedup,omitempty"` // a reference hint replaced the result
	// DedupID is the id the hint refers to (Dedup), or the id line shown
	// with the result, when the dedup stage recorded it.
	DedupID string `json:"dedup_id,omitempty"`
	// NearRef is set when the hint (Dedup) is a near-reference: an
	// earlier result plus an exact delta.
	NearRef bool `json:"near_ref,omitempty"`
	// Shape is the shape of a text result the shaping stage knew
	// (package shape: read, paths, grep, test, log), ShapeClass the
	// class of the shaping used (lossless, display or elide; empty when
	// the text was left as it is), ShapeRules its rules, in order, and,
	// for an elision, Anchors the anchors of the original it kept and
	// lost (an elision that would lose one is not used; a lossless or
	// display shaping keeps them all, verified by expanding it).
	Shape      string         `json:"shape,omitempty"`
	ShapeClass string         `json:"shape_class,omitempty"`
	ShapeRules []string       `json:"shape_rules,omitempty"`
	Anchors    *shape.Anchors `json:"anchors,omitempty"`
	// Saved splits RawTokens − OutputTokens by the stage that saved them.
	Saved Savings `json:"saved"`

	// Set when Truncated.
	Pointer        *string `json:"pointer,omitempty"` // JSON Pointer of the item array ("" = root)
	Items          *Items  `json:"items,omitempty"`
	Strategy       string  `json:"strategy,omitempty"`
	StrategySource string  `json:"strategy_source,omitempty"`
	Solver         string  `json:"solver,omitempty"`
	Handle         string  `json:"handle,omitempty"`
	Chunks         int     `json:"chunks,omitempty"`

	// Provider metadata passed through: pagination (total, startAt,
	// maxResults, page, per_page, X-Total, …) and sort (field, order), as
	// the provider wrote them.
	Pagination map[string]string `json:"pagination,omitempty"`
	Sort       map[string]string `json:"sort,omitempty"`
}

// Savings are the tokens each stage saved, against compact JSON of the
// input (the reporting rule: every saving is attributed to its source and
// measured against the same baseline, by the same tokenizer). They are
// measured on the texts between the stages, so that
//
//	Filter + Dedup + Encoding + Fitting == RawTokens − OutputTokens
//
// exactly. A part is negative when its stage cost tokens.
type Savings struct {
	// Filter is raw minus the filtered result as compact JSON (or text),
	// less what the filter's note costs.
	Filter int `json:"filter"`
	// Dedup is everything when a reference hint replaces the result;
	// otherwise minus the cost of the id line shown with it (or 0).
	Dedup int `json:"dedup"`
	// Encoding is the filtered result as compact JSON minus its encoding
	// in the output format (auto, TOON, csv_from_md, or a text shaping),
	// before fitting.
	Encoding int `json:"encoding"`
	// Fitting is what the budget cut: the whole encoding minus the
	// fitted text (gap markers, hints and chunk index included).
	Fitting int `json:"fitting"`
	// Estimated is set when the whole encoding was not written out but
	// priced from a sample of the items (a result far over budget, in
	// an encoding other than compact JSON): Encoding and Fitting are then
	// split by that estimate; their sum, and every other figure, is
	// still exact.
	Estimated bool `json:"estimated,omitempty"`
}

// Total is the sum of the parts: RawTokens − OutputTokens.
func (s Savings) Total() int { return s.Filter + s.Dedup + s.Encoding + s.Fitting }

// SavedAgainst is r's savings against n tokens, what the model would
// have read without terse (the text as the tool sent it, by r's
// tokenizer) rather than compact JSON of the input: what compacting the
// input saved (n − RawTokens, as indentation) is the encoding's. The
// parts then sum to n − OutputTokens. It is the one rule by which every
// surface reports savings against the text as sent.
func (r *Report) SavedAgainst(n int) Savings {
	s := r.Saved
	s.Encoding += n - r.RawTokens
	return s
}

// Items counts the items of a trimmed result per detail level.
type Items struct {
	Unit     string `json:"unit"` // items, members, lines or files
	Total    int    `json:"total"`
	Kept     int    `json:"kept"`
	Full     int    `json:"full"`
	Standard int    `json:"standard"`
	Minimal  int    `json:"minimal"`
}

var paginationKeys = map[string]bool{
	"total": true, "total_count": true, "totalCount": true, "totalSize": true, "startAt": true, "maxResults": true,
	"isLast": true, "page": true, "per_page": true, "perPage": true, "page_size": true, "pageSize": true,
	"total_pages": true, "totalPages": true, "next_page": true, "nextPage": true, "next_cursor": true,
	"nextPageToken": true, "next_page_token": true, "has_more": true, "hasMore": true, "offset": true, "limit": true,
	"start_cursor": true, "incomplete_results": true,
}

var sortKeys = map[string]bool{
	"sort": true, "sort_by": true, "sortBy": true, "order": true, "order_by": true, "orderBy": true,
	"sort_order": true, "sortOrder": true, "direction": true,
}

var paginationHeaders = []string{"X-Total", "X-Total-Pages", "X-Page", "X-Per-Page", "X-Next-Page", "X-Prev-Page", "Link"}

// Header holds a provider's response headers, each name with its values,
// as net/http's Header does (convert one with Header(resp.Header)); the
// library does not link net/http for it.
type Header map[string][]string

// Get returns the first value of the header name, matched without regard
// to case as HTTP header names are, or "". When several names differ only
// in case, the least of them (byte order) counts, so the result does not
// depend on map order.
func (h Header) Get(name string) string {
	if vs := h[name]; len(vs) > 0 {
		return vs[0]
	}
	key, val, found := "", "", false
	for k, vs := range h {
		if len(vs) > 0 && strings.EqualFold(k, name) && (!found || k < key) {
			key, val, found = k, vs[0], true
		}
	}
	return val
}

// providerMeta collects pagination and sort metadata from the top level of
// a JSON payload (and from pagination-like wrappers one level down, such
// as "meta" or "response_metadata") and from response headers.
func providerMeta(v tree.Value, h Header) (pag, sort map[string]string) {
	put := func(m *map[string]string, k string, x tree.Value) {
		if !x.IsPrimitive() || x.IsNull() {
			return
		}
		if *m == nil {
			*m = map[string]string{}
		}
		s := x.String()
		if x.Kind() == tree.KindString {
			s = x.Str()
		}
		(*m)[k] = s
	}
	scan := func(obj tree.Value, prefix string) {
		for _, mem := range obj.Members() {
			switch {
			case paginationKeys[mem.Key]:
				put(&pag, prefix+mem.Key, mem.Value)
			case sortKeys[mem.Key]:
				put(&sort, prefix+mem.Key, mem.Value)
			}
		}
	}
	if v.Kind() == tree.KindObject {
		scan(v, "")
		for _, mem := range v.Members() {
			l := strings.ToLower(mem.Key)
			if mem.Value.Kind() == tree.KindObject && (l == "meta" || l == "pagination" || l == "page_info" ||
				l == "pageinfo" || l == "response_metadata" || l == "paging") {
				scan(mem.Value, mem.Key+".")
			}
		}
	}
	for _, k := range paginationHeaders {
		if s := h.Get(k); s != "" {
			if pag == nil {
				pag = map[string]string{}
			}
			pag[k] = s
		}
	}
	return pag, sort
}
