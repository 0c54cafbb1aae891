package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// Report is the outcome of a run.
type Report struct {
	Reader    string `json:"reader"`
	Tokenizer string `json:"tokenizer"`
	Seed      uint64 `json:"seed"`
	Baseline  string `json:"baseline"`
	Documents int    `json:"documents"`
	Questions int    `json:"questions"`
	// Encodings in the order given, the baseline included.
	Encodings []EncodingReport `json:"encodings"`
	// Results has one entry per question and encoding.
	Results []Result `json:"results"`
}

// EncodingReport sums up one encoding.
type EncodingReport struct {
	Name      string  `json:"name"`
	Lossless  bool    `json:"lossless"`
	Questions int     `json:"questions"`
	Correct   int     `json:"correct"`
	Errors    int     `json:"errors"`    // requests that failed (graded wrong)
	NotShown  int     `json:"not_shown"` // questions whose gold is "not shown"
	Accuracy  float64 `json:"accuracy"`  // Correct / Questions
	// DocTokens is the tokens of the documents in this encoding, each
	// document counted once; MeanTokens the mean document tokens per
	// question (what a reader reads to answer one).
	DocTokens  int     `json:"doc_tokens"`
	MeanTokens float64 `json:"mean_tokens"`
	// ProviderInputTokens and ProviderOutputTokens sum what the provider
	// reported for the requests (its own tokenizer; 0 when unknown).
	ProviderInputTokens  int `json:"provider_input_tokens,omitempty"`
	ProviderOutputTokens int `json:"provider_output_tokens,omitempty"`
	// TokenRatio is DocTokens over the baseline's.
	TokenRatio float64 `json:"token_ratio"`
	// CorrectPer1K is correct answers per 1,000 document tokens read.
	CorrectPer1K float64      `json:"correct_per_1k_tokens"`
	Kinds        []KindReport `json:"kinds"`
	// Paired compares with the baseline on the same questions; nil for
	// the baseline itself.
	Paired *Paired `json:"paired,omitempty"`
}

// KindReport is the accuracy on one kind of question.
type KindReport struct {
	Kind      string  `json:"kind"`
	Questions int     `json:"questions"`
	Correct   int     `json:"correct"`
	Accuracy  float64 `json:"accuracy"`
}

// Paired compares an encoding with the baseline question by question.
type Paired struct {
	// BaselineOnly counts questions right in the baseline and wrong here;
	// EncodingOnly the reverse. Only these discordant pairs carry evidence.
	BaselineOnly int `json:"baseline_only"`
	EncodingOnly int `json:"encoding_only"`
	// Diff is this accuracy minus the baseline's, with its 95 % percentile
	// bootstrap interval (2,000 resamples of the questions).
	Diff   float64 `json:"diff"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// P is the two-sided exact McNemar p-value.
	P float64 `json:"p"`
}

// BootstrapReps is the number of resamples behind Paired's interval.
const BootstrapReps = 2000

func (p *Plan) report(results []Result) *Report {
	rep := &Report{
		Reader:    p.cfg.Reader.Name(),
		Tokenizer: p.counter.Name(),
		Seed:      p.cfg.Seed,
		Baseline:  p.baseline,
		Documents: len(p.enc),
		Questions: len(p.cfg.Questions),
		Results:   results,
	}
	// Outcomes per encoding, indexed by question, for the paired tests.
	index := make(map[string]int, len(p.cfg.Questions))
	for i, q := range p.cfg.Questions {
		index[q.ID] = i
	}
	byEnc := map[string][]bool{}
	for _, e := range p.cfg.Encodings {
		byEnc[e.Name] = make([]bool, len(p.cfg.Questions))
	}
	for _, r := range results {
		byEnc[r.Encoding][index[r.Question]] = r.Correct
	}
	baseToks := 0
	for _, toks := range p.docToks {
		baseToks += toks[p.baseline]
	}
	for _, e := range p.cfg.Encodings {
		er := EncodingReport{Name: e.Name, Lossless: e.Lossless}
		kinds := map[string]*KindReport{}
		for _, r := range results {
			if r.Encoding != e.Name {
				continue
			}
			er.Questions++
			if r.Correct {
				er.Correct++
			}
			if r.Error != "" {
				er.Errors++
			}
			if r.Gold == NotShown {
				er.NotShown++
			}
			er.ProviderInputTokens += r.InputTokens
			er.ProviderOutputTokens += r.OutputTokens
			k := kinds[r.Kind]
			if k == nil {
				k = &KindReport{Kind: r.Kind}
				kinds[r.Kind] = k
			}
			k.Questions++
			if r.Correct {
				k.Correct++
			}
		}
		for _, k := range Kinds {
			if kr := kinds[k]; kr != nil {
				kr.Accuracy = ratio(kr.Correct, kr.Questions)
				er.Kinds = append(er.Kinds, *kr)
			}
		}
		er.Accuracy = ratio(er.Correct, er.Questions)
		read := 0
		for _, q := range p.cfg.Questions {
			read += p.docToks[q.Doc][e.Name]
		}
		for _, toks := range p.docToks {
			er.DocTokens += toks[e.Name]
		}
		if er.Questions > 0 {
			er.MeanTokens = float64(read) / float64(er.Questions)
		}
		if read > 0 {
			er.CorrectPer1K = float64(er.Correct) / float64(read) * 1000
		}
		if baseToks > 0 {
			er.TokenRatio = float64(er.DocTokens) / float64(baseToks)
		}
		if e.Name != p.baseline {
			x, y := byEnc[p.baseline], byEnc[e.Name]
			pr := &Paired{}
			for i := range x {
				switch {
				case x[i] && !y[i]:
					pr.BaselineOnly++
				case !x[i] && y[i]:
					pr.EncodingOnly++
				}
			}
			pr.Diff = float64(pr.EncodingOnly-pr.BaselineOnly) / float64(max(len(x), 1))
			pr.CILow, pr.CIHigh = BootstrapDiff(x, y, BootstrapReps, 0.95, p.cfg.Seed)
			pr.P = McNemarExact(pr.BaselineOnly, pr.EncodingOnly)
			er.Paired = pr
		}
		rep.Encodings = append(rep.Encodings, er)
	}
	return rep
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func pct(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }

func signedPP(f float64) string {
	s := fmt.Sprintf("%+.1f", 100*f)
	if s == "-0.0" {
		s = "+0.0"
	}
	return s
}

// thousands writes n with comma separators.
func thousandsSep(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// WriteMarkdown writes the report as Markdown tables with a short guide to
// reading them.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# terse eval\n\n")
	fmt.Fprintf(&b, "Reader **%s**; %d questions about %d documents, each asked in every encoding; tokens by **%s**; baseline **%s**; seed %d.\n\n",
		r.Reader, r.Questions, r.Documents, r.Tokenizer, r.Baseline, r.Seed)
	b.WriteString("| encoding | accuracy | correct | not shown | doc tokens | tokens vs " + r.Baseline + " | correct per 1k tokens | Δ accuracy [95 % CI] | McNemar p | errors |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|\n")
	for _, e := range r.Encodings {
		delta, p := "baseline", "—"
		if e.Paired != nil {
			delta = fmt.Sprintf("%s pp [%s, %s] (%d↓ %d↑)", signedPP(e.Paired.Diff), signedPP(e.Paired.CILow), signedPP(e.Paired.CIHigh), e.Paired.BaselineOnly, e.Paired.EncodingOnly)
			p = fmt.Sprintf("%.3g", e.Paired.P)
		}
		fmt.Fprintf(&b, "| %s | %s | %d/%d | %d | %s | %s | %.2f | %s | %s | %d |\n",
			e.Name, pct(e.Accuracy), e.Correct, e.Questions, e.NotShown, thousandsSep(e.DocTokens),
			signedPct(e.TokenRatio-1), e.CorrectPer1K, delta, p, e.Errors)
	}
	if r.providerTokens() {
		b.WriteString("\nTokens the provider reported (its own tokenizer, whole prompts):\n\n| encoding | input tokens | output tokens | input vs " + r.Baseline + " |\n|---|---:|---:|---:|\n")
		base := 0
		for _, e := range r.Encodings {
			if e.Name == r.Baseline {
				base = e.ProviderInputTokens
			}
		}
		for _, e := range r.Encodings {
			rel := "—"
			if base > 0 {
				rel = signedPct(float64(e.ProviderInputTokens)/float64(base) - 1)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", e.Name, thousandsSep(e.ProviderInputTokens), thousandsSep(e.ProviderOutputTokens), rel)
		}
	}
	b.WriteString("\n## Accuracy by question kind\n\n| kind | questions |")
	for _, e := range r.Encodings {
		b.WriteString(" " + e.Name + " |")
	}
	b.WriteString("\n|---|---:|")
	for range r.Encodings {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, k := range Kinds {
		n := 0
		cells := make([]string, len(r.Encodings))
		for i, e := range r.Encodings {
			cells[i] = "—"
			for _, kr := range e.Kinds {
				if kr.Kind == k {
					n = kr.Questions
					cells[i] = pct(kr.Accuracy)
				}
			}
		}
		if n == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %s |\n", k, n, strings.Join(cells, " | "))
	}
	b.WriteString(`
How to read this: accuracy is the share of questions answered right. "not
shown" counts questions whose gold answer is "not shown" because the encoding
left their item out (a budgeted encoding). Δ accuracy is the encoding's
accuracy minus the baseline's on the same questions, in percentage points, with
a 95 % bootstrap interval; (N↓ M↑) are the questions only the baseline got
right and those only this encoding got right. McNemar p is the exact two-sided
test on those pairs: below 0.05, the difference is unlikely to be chance.
Tokens are the documents' own, each counted once, by the named tokenizer.
`)
	if losses := r.losses(10); len(losses) > 0 {
		b.WriteString("\n## Answers lost against the baseline\n\nQuestions the baseline got right and the encoding got wrong (at most 10 per encoding; all in report.json):\n\n| encoding | question | gold | reply |\n|---|---|---|---|\n")
		for _, l := range losses {
			fmt.Fprintf(&b, "| %s | %s: %s | %s | %s |\n", l.Encoding, cell(l.Question), cell(l.Text), cell(l.Gold), cell(l.Reply))
		}
	}
	if errs := r.errorSample(10); len(errs) > 0 {
		b.WriteString("\n## Errors\n\n")
		for _, e := range errs {
			fmt.Fprintf(&b, "- %s (%s): %s\n", e.Question, e.Encoding, oneLine(e.Error))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func signedPct(f float64) string {
	s := fmt.Sprintf("%+.1f %%", 100*f)
	if s == "-0.0 %" {
		s = "+0.0 %"
	}
	return s
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

func (r *Report) providerTokens() bool {
	for _, e := range r.Encodings {
		if e.ProviderInputTokens > 0 {
			return true
		}
	}
	return false
}

// losses returns up to n results per encoding that are wrong where the
// baseline's answer to the same question is right.
func (r *Report) losses(n int) []Result {
	right := map[string]bool{}
	for _, x := range r.Results {
		if x.Encoding == r.Baseline && x.Correct {
			right[x.Question] = true
		}
	}
	count := map[string]int{}
	var out []Result
	for _, x := range r.Results {
		if x.Encoding != r.Baseline && !x.Correct && right[x.Question] && count[x.Encoding] < n {
			count[x.Encoding]++
			out = append(out, x)
		}
	}
	return out
}

// cell makes text safe for a Markdown table cell.
func cell(s string) string {
	s = oneLine(s)
	s = strings.ReplaceAll(s, "|", "\\|")
	if s == "" {
		return "(empty)"
	}
	return s
}

// errorSample returns up to n failed results.
func (r *Report) errorSample(n int) []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Error != "" && len(out) < n {
			out = append(out, x)
		}
	}
	return out
}

// WriteSVG draws accuracy (y) against mean document tokens per question (x),
// one labelled point per encoding, the baseline in orange. The accuracy axis
// starts at the nearest 10 % below the lowest accuracy, so that small
// differences near 100 % stay visible; the axis says where it starts.
func (r *Report) WriteSVG(w io.Writer) error {
	const (
		W, H         = 640, 400
		left, right  = 70, 30
		top, bottom  = 40, 60
		plotW, plotH = W - left - right, H - top - bottom
		tickCount    = 5
		font         = `font-family="sans-serif"`
		axisColour   = "#333"
		charW        = 7 // rough width of a 12px character, for label placement
	)
	maxX, minAcc := 0.0, 1.0
	for _, e := range r.Encodings {
		maxX = math.Max(maxX, e.MeanTokens)
		minAcc = math.Min(minAcc, e.Accuracy)
	}
	step := niceStep(maxX / tickCount)
	maxX = step * math.Ceil(maxX/step)
	if maxX == 0 {
		maxX, step = 1, 0.2
	}
	// Accuracy axis from lo to 100 %, in tenths.
	lo := math.Max(0, math.Floor(minAcc*10-0.5)/10)
	yStep := 0.1
	if lo < 0.5 {
		yStep = 0.2
		lo = math.Floor(lo*5) / 5
	}
	x := func(v float64) float64 { return left + v/maxX*plotW }
	y := func(acc float64) float64 { return top + (1-acc)/(1-lo)*plotH }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%d" y="24" %s font-size="15">Accuracy against tokens per question (%s; reader %s)</text>`+"\n", left, font, xmlEscape(r.Tokenizer), xmlEscape(r.Reader))
	for i := 0; ; i++ {
		acc := lo + float64(i)*yStep
		if acc > 1+1e-9 {
			break
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(acc), left+plotW, y(acc))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" %s font-size="11" text-anchor="end">%.0f %%</text>`+"\n", left-6, y(acc)+4, font, acc*100)
	}
	for v := 0.0; v <= maxX+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", x(v), top+plotH, x(v), top+plotH+5, axisColour)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" %s font-size="11" text-anchor="middle">%s</text>`+"\n", x(v), top+plotH+18, font, fmtTick(v))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>`+"\n", left, top, left, top+plotH, axisColour)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s"/>`+"\n", left, top+plotH, left+plotW, top+plotH, axisColour)
	fmt.Fprintf(&b, `<text x="%d" y="%d" %s font-size="12" text-anchor="middle">document tokens per question (mean); baseline %s in orange</text>`+"\n", left+plotW/2, H-18, font, xmlEscape(r.Baseline))
	fmt.Fprintf(&b, `<text x="16" y="%d" %s font-size="12" text-anchor="middle" transform="rotate(-90 16 %d)">accuracy</text>`+"\n", top+plotH/2, font, top+plotH/2)
	// Labels go right of their point, or left near the right edge, and
	// move down a line while they would overlap one already placed.
	type box struct{ x0, x1, y float64 }
	var placed []box
	for _, e := range r.Encodings {
		px, py := x(e.MeanTokens), y(e.Accuracy)
		fill := "#2b6cb0"
		if e.Name == r.Baseline {
			fill = "#c05621"
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="5" fill="%s"><title>%s: %s, %.0f tokens</title></circle>`+"\n", px, py, fill, xmlEscape(e.Name), pct(e.Accuracy), e.MeanTokens)
		wd := float64(charW * len([]rune(e.Name)))
		lx, anchor := px+8, "start"
		x0, x1 := lx, lx+wd
		if x1 > W-4 {
			lx, anchor = px-8, "end"
			x0, x1 = lx-wd, lx
		}
		ly := py - 8
		for moved := true; moved; {
			moved = false
			for _, p := range placed {
				if x0 < p.x1 && p.x0 < x1 && math.Abs(ly-p.y) < 14 {
					ly = p.y + 14
					moved = true
				}
			}
		}
		placed = append(placed, box{x0, x1, ly})
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" %s font-size="12" text-anchor="%s">%s</text>`+"\n", lx, ly, font, anchor, xmlEscape(e.Name))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// niceStep rounds a raw tick step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func fmtTick(v float64) string {
	if v == math.Trunc(v) {
		return thousandsSep(int(v))
	}
	return fmt.Sprintf("%g", v)
}

func xmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}
