package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// Config describes one evaluation.
type Config struct {
	// Docs are the documents, by name; every question's Doc names one.
	Docs []Document
	// Questions are asked in every encoding.
	Questions []Question
	// Encodings; the first is the baseline unless Baseline names another.
	Encodings []Encoding
	Baseline  string
	Reader    Reader
	// Counter measures the texts. Nil means o200k_base.
	Counter tokens.Counter
	// Concurrency bounds the requests in flight. Zero means 4.
	Concurrency int
	// Progress, when set, receives a progress line now and then.
	Progress io.Writer
	// Seed seeds the bootstrap.
	Seed uint64
	// Model and Tokens describe the run in the report.
	Model string
}

// Plan is an evaluation ready to run: every document encoded, every
// request built.
type Plan struct {
	cfg   Config
	items []item
	// texts[doc][encoding] and their tokens.
	enc      map[string]map[string]*Encoded
	docToks  map[string]map[string]int
	counter  tokens.Counter
	baseline string
}

type item struct {
	q    *Question
	enc  string
	req  *Request
	gold string
	also []string
}

// Prepare encodes every document in every encoding and builds the requests.
func Prepare(ctx context.Context, cfg Config) (*Plan, error) {
	if len(cfg.Encodings) == 0 {
		return nil, errors.New("no encodings")
	}
	if cfg.Reader == nil {
		return nil, errors.New("no reader")
	}
	p := &Plan{cfg: cfg, enc: map[string]map[string]*Encoded{}, docToks: map[string]map[string]int{}, counter: cfg.Counter}
	if p.counter == nil {
		p.counter = tokens.O200kBase()
	}
	p.baseline = cfg.Baseline
	if p.baseline == "" {
		p.baseline = cfg.Encodings[0].Name
	}
	names := map[string]bool{}
	for _, e := range cfg.Encodings {
		if names[e.Name] {
			return nil, fmt.Errorf("encoding %q given twice", e.Name)
		}
		names[e.Name] = true
	}
	if !names[p.baseline] {
		return nil, fmt.Errorf("baseline %q is not one of the encodings", p.baseline)
	}
	docs := map[string]tree.Value{}
	for _, d := range cfg.Docs {
		docs[d.Name] = d.Value
	}
	used := map[string]bool{}
	ids := map[string]bool{}
	for _, q := range cfg.Questions {
		if _, ok := docs[q.Doc]; !ok {
			return nil, fmt.Errorf("question %s: unknown document %q", q.ID, q.Doc)
		}
		if ids[q.ID] {
			return nil, fmt.Errorf("question id %s given twice", q.ID)
		}
		ids[q.ID] = true
		used[q.Doc] = true
	}
	for i, d := range cfg.Docs {
		if !used[d.Name] {
			continue
		}
		p.enc[d.Name] = map[string]*Encoded{}
		p.docToks[d.Name] = map[string]int{}
		for _, e := range cfg.Encodings {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			out, err := e.Encode(ctx, d.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: encoding %s: %w", d.Name, e.Name, err)
			}
			p.enc[d.Name][e.Name] = &out
			p.docToks[d.Name][e.Name] = p.counter.Count(out.Text)
		}
		if cfg.Progress != nil && (i+1)%20 == 0 {
			fmt.Fprintf(cfg.Progress, "eval: encoded %d/%d documents\n", i+1, len(cfg.Docs))
		}
	}
	// Requests go document by document, encoding by encoding: those in a
	// row share their prompt's prefix (system prompt and document), which
	// providers can serve from their prompt caches.
	byDoc := map[string][]*Question{}
	for i := range cfg.Questions {
		q := &cfg.Questions[i]
		byDoc[q.Doc] = append(byDoc[q.Doc], q)
	}
	for _, d := range cfg.Docs {
		qs := byDoc[d.Name]
		delete(byDoc, d.Name) // a document named twice is asked about once
		for _, e := range cfg.Encodings {
			out := p.enc[d.Name][e.Name]
			for _, q := range qs {
				gold, also := Expected(q, out)
				p.items = append(p.items, item{q: q, enc: e.Name, req: NewRequest(q, e.Name, out), gold: gold, also: also})
			}
		}
	}
	return p, nil
}

// Estimate is what a run will send.
type Estimate struct {
	Requests     int // requests to send (not cached)
	Cached       int // requests answered from the cache
	InputTokens  int // prompt tokens of the requests to send, by Tokenizer
	OutputTokens int // upper bound: requests × max reply tokens
	Tokenizer    string
}

// Cost returns the estimated cost in dollars at the given prices per
// million input and output tokens.
func (e Estimate) Cost(inPerM, outPerM float64) float64 {
	return float64(e.InputTokens)/1e6*inPerM + float64(e.OutputTokens)/1e6*outPerM
}

// Estimate counts what Run would send. The decode reader sends nothing.
func (p *Plan) Estimate() Estimate {
	est := Estimate{Tokenizer: p.counter.Name()}
	h, ok := p.cfg.Reader.(*HTTPReader)
	if !ok {
		return est
	}
	sysToks := p.counter.Count(SystemPrompt)
	for _, it := range p.items {
		if h.IsCached(it.req) {
			est.Cached++
			continue
		}
		est.Requests++
		// The document's tokens are known; the wrapper and question are
		// small and counted here.
		est.InputTokens += sysToks + p.docToks[it.q.Doc][it.enc] + p.counter.Count(it.q.Text) + 12
		est.OutputTokens += h.maxTokens()
	}
	return est
}

// Result is one question asked in one encoding.
type Result struct {
	Question string   `json:"question"` // Question.ID
	Kind     string   `json:"kind"`
	Text     string   `json:"text"` // the question asked
	Encoding string   `json:"encoding"`
	Gold     string   `json:"gold"`
	Also     []string `json:"also,omitempty"`
	Reply    string   `json:"reply"`
	Correct  bool     `json:"correct"`
	Error    string   `json:"error,omitempty"`
	Cached   bool     `json:"cached,omitempty"`
	// Tokens the provider reports for the request, when it does.
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
}

// Run asks every question in every encoding and grades the replies. A
// reader error on one request (a malformed reply, a provider that keeps
// failing) is recorded in that result, graded wrong, and the run goes on;
// cancelling ctx stops it.
func (p *Plan) Run(ctx context.Context) (*Report, error) {
	conc := p.cfg.Concurrency
	if conc <= 0 {
		conc = 4
	}
	results := make([]Result, len(p.items))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		done     int
		errs     int
		lastTick = time.Now()
		start    = time.Now()
	)
	sem := make(chan struct{}, conc)
	for i := range p.items {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			it := &p.items[i]
			rep, err := p.cfg.Reader.Answer(ctx, it.req)
			r := Result{Question: it.q.ID, Kind: it.q.Kind, Text: it.q.Text, Encoding: it.enc, Gold: it.gold, Also: it.also, Reply: rep.Text, Cached: rep.Cached, InputTokens: rep.InputTokens, OutputTokens: rep.OutputTokens}
			if err != nil {
				r.Error = err.Error()
			} else {
				r.Correct = Grade(rep.Text, it.gold, it.also...)
			}
			results[i] = r
			mu.Lock()
			done++
			if err != nil {
				errs++
			}
			if p.cfg.Progress != nil && (time.Since(lastTick) > 2*time.Second || done == len(p.items)) {
				lastTick = time.Now()
				el := time.Since(start)
				eta := time.Duration(float64(el) / float64(done) * float64(len(p.items)-done))
				fmt.Fprintf(p.cfg.Progress, "eval: %d/%d answered, %d errors, %s elapsed, ~%s left\n", done, len(p.items), errs, el.Round(time.Second), eta.Round(time.Second))
			}
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.report(results), nil
}
