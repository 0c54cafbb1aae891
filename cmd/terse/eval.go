package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/terse-dev/terse/eval"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

const evalDoc = `
Eval measures whether a model still answers correctly from what terse shows
it. It generates exact-answer questions from JSON documents (a value looked up
by a natural key such as number, id, name or title; a full URL; counts, with
and without a filter; null vs empty string vs absent; wrapper fields outside
the item list; the first and last item), computes each gold answer from the
document, asks every question once per encoding, grades the replies and
compares each encoding with the baseline on the same questions.

Encodings (--encodings, comma-separated; the first is the baseline):
  json             compact JSON
  toon             TOON v4, as "terse encode --to toon" writes it
  auto             terse's adaptive encoding, as "terse encode --to auto"
  compact          "terse compact --to auto" under a budget of half the
                   document's JSON tokens; compact:N uses N tokens, and
                   compact@json or compact:N@toon fit in that format.
                   Questions about what it leaves out expect "not shown".
  NAME=COMMAND     (with --encoding) any command: the document as compact
                   JSON on its standard input, the text on its standard output

File reads (--reads FILE|DIR): instead of JSON documents, source files
shown as a coding agent reads them, with questions an edit depends on: the
exact text of line N, and which line number holds a given text. The
encodings then default to
  read             the read as Claude Code shows it ("     N→" on every line)
  read:gutter      terse's default read shaping (numbers unpadded)
  read:tab         numbers unpadded, a tab after each instead of "→"
  read:sparse      numbers on the first, the last and every 10th line only
  read:range       the line range declared once, no numbers
so that a model reader measures the read forms of [shape] read_form.

Readers (--reader):
  decode     no model: decodes each text and looks the answer up. It checks
             questions, gold answers and grading end to end and scores 100 %
             on every lossless encoding. The default; it sends nothing.
  anthropic  the Anthropic Messages API. Key from --api-key or
             ANTHROPIC_API_KEY, model from --model or ANTHROPIC_MODEL,
             base URL from --base-url or ANTHROPIC_BASE_URL.
  openai     any OpenAI-compatible Chat Completions endpoint: OpenAI,
             Ollama (--base-url http://localhost:11434/v1), vLLM,
             llama.cpp server, LM Studio. Key, model and base URL from the
             flags or OPENAI_API_KEY, OPENAI_MODEL, OPENAI_BASE_URL.

Before a model reader sends anything, eval prints how many requests it would
send and their tokens (and the cost, given --price-in and --price-out), and
stops unless --yes is given. Replies are cached by request (--cache), so a
re-run sends nothing; 429 and 5xx replies are retried with backoff.

Written to --out: report.md (also printed), report.json (every reply and its
grade), chart.svg (accuracy against tokens per encoding) and questions.jsonl
(the questions asked, reusable with --questions-file). Progress goes to
standard error. See docs/eval.md for how to read the report.

Examples:
  terse eval --docs ../shared/corpus/github
  terse eval --docs issues.json --encodings json,auto,compact:2000
  terse eval --reader openai --base-url http://localhost:11434/v1 --model qwen2.5:7b --docs data/ --yes
  terse eval --reader anthropic --model claude-haiku-4-5 --questions 5 --docs data/ --yes
  terse eval --encoding csv='mlr --ijson --ocsv cat' --encodings json,auto --docs list.json
  terse eval --reader anthropic --model claude-haiku-4-5 --reads internal/ --questions 6 --yes
`

// multiFlag is a flag that may be given several times.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runEval(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", "[--docs DIR|FILE]... [--questions N] [--encodings LIST] [--reader decode|anthropic|openai] [--model M] [--base-url URL] [--out DIR] [--seed S] [--yes] [DIR|FILE...]", evalDoc, stdout, stderr)
	var docs, extra, params multiFlag
	fs.Var(&docs, "docs", "a JSON document, or a directory searched for *.json (repeatable; also as arguments)")
	var reads multiFlag
	fs.Var(&reads, "reads", "a source file asked about as a file read, or a directory searched for source files (repeatable)")
	perDoc := fs.Int("questions", 10, "questions generated per document")
	qfile := fs.String("questions-file", "", "hand-written questions, JSONL: {\"document\": FILE, \"question\": ..., \"answer\": ...}")
	encList := fs.String("encodings", "json,toon,auto,compact", "encodings to compare, comma-separated; the first is the baseline")
	fs.Var(&extra, "encoding", "an external encoding NAME=COMMAND (repeatable); add NAME to --encodings or it is appended")
	baseline := fs.String("baseline", "", "baseline encoding (default: the first of --encodings)")
	readerName := fs.String("reader", "decode", "who answers: decode, anthropic or openai")
	model := fs.String("model", "", "model name (default from ANTHROPIC_MODEL or OPENAI_MODEL)")
	baseURL := fs.String("base-url", "", "API base URL (default from ANTHROPIC_BASE_URL or OPENAI_BASE_URL, else the provider's)")
	apiKey := fs.String("api-key", "", "API key (default from ANTHROPIC_API_KEY or OPENAI_API_KEY)")
	out := fs.String("out", "eval-out", "directory for report.md, report.json, chart.svg and questions.jsonl")
	seed := fs.Uint64("seed", 1, "seed for question generation and the bootstrap")
	yes := fs.Bool("yes", false, "send requests to the model after printing the estimate")
	conc := fs.Int("concurrency", 4, "requests in flight at once")
	maxTokens := fs.Int("max-tokens", 128, "longest reply, in tokens")
	maxDoc := fs.Int("max-doc-tokens", 30000, "with a model reader, skip documents whose compact JSON has more tokens than this (0: no limit)")
	cacheDir := fs.String("cache", "", "response cache directory (default: the user cache directory's terse/eval)")
	priceIn := fs.Float64("price-in", 0, "price in dollars per million input tokens, for the estimate")
	priceOut := fs.Float64("price-out", 0, "price in dollars per million output tokens, for the estimate")
	fs.Var(&params, "param", "extra request body member KEY=JSON (repeatable); KEY=null removes a default, e.g. --param max_tokens=null --param max_completion_tokens=2000")
	promptCache := fs.Bool("prompt-cache", false, "anthropic: mark each document as a prompt-cache breakpoint, so later questions about it cost a tenth")
	tokName := fs.String("tokenizer", "o200k_base", "tokenizer for token counts: o200k_base, cl100k_base or estimate")
	var positional []string
	for {
		if err := parseFlags(fs, args, stdout); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	docs = append(docs, positional...)
	encSet := false
	fs.Visit(func(f *flag.Flag) { encSet = encSet || f.Name == "encodings" })
	if len(reads) > 0 && !encSet {
		*encList = strings.Join(eval.ReadEncodings, ",")
	}

	counter, err := tokens.Get(*tokName)
	if err != nil {
		return &usageError{err.Error()}
	}
	encs, err := evalEncodings(*encList, extra, counter)
	if err != nil {
		return err
	}

	reader, err := evalReader(*readerName, &eval.HTTPReader{API: *readerName, Model: *model, BaseURL: *baseURL, Key: *apiKey, MaxTokens: *maxTokens, CacheDir: *cacheDir, PromptCache: *promptCache}, params)
	if err != nil {
		return err
	}

	all, questions, err := evalQuestions(docs, reads, *qfile, reader, counter, *maxDoc, *perDoc, *seed, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "eval: %d questions about %d documents, %d encodings, reader %s\n", len(questions), len(all), len(encs), reader.Name())

	plan, err := eval.Prepare(ctx, eval.Config{
		Docs: all, Questions: questions, Encodings: encs, Baseline: *baseline,
		Reader: reader, Counter: counter, Concurrency: *conc, Progress: stderr, Seed: *seed,
	})
	if err != nil {
		return err
	}
	if err := confirmSend(plan, reader, *priceIn, *priceOut, *yes, stderr); err != nil {
		return err
	}
	rep, err := plan.Run(ctx)
	if err != nil {
		return err
	}
	return writeEval(rep, questions, *out, stdout)
}

// evalEncodings parses the encodings of --encodings and --encoding
// (each external encoding not named in the list is appended).
func evalEncodings(encList string, extra multiFlag, counter tokens.Counter) ([]eval.Encoding, error) {
	external := map[string]string{}
	for _, e := range extra {
		name, cmd, ok := strings.Cut(e, "=")
		if !ok || name == "" || cmd == "" {
			return nil, &usageError{fmt.Sprintf("--encoding %q: want NAME=COMMAND", e)}
		}
		external[name] = e
	}
	var specs []string
	for _, s := range strings.Split(encList, ",") {
		if s = strings.TrimSpace(s); s != "" {
			specs = append(specs, s)
		}
	}
	for _, e := range extra {
		name, _, _ := strings.Cut(e, "=")
		if !slices.Contains(specs, name) {
			specs = append(specs, name)
		}
	}
	var encs []eval.Encoding
	for _, s := range specs {
		if e, ok := external[s]; ok {
			s = e
		}
		enc, err := eval.ParseEncoding(s, counter)
		if err != nil {
			return nil, &usageError{err.Error()}
		}
		encs = append(encs, enc)
	}
	if len(encs) == 0 {
		return nil, &usageError{"no encodings"}
	}
	return encs, nil
}

// evalReader returns the reader named (decode, anthropic or openai); a
// model reader is h, completed from --param and the environment.
func evalReader(readerName string, h *eval.HTTPReader, params multiFlag) (eval.Reader, error) {
	switch readerName {
	case "decode":
		return eval.DecodeReader{}, nil
	case "anthropic", "openai":
		for _, p := range params {
			k, v, ok := strings.Cut(p, "=")
			var val any
			if !ok || k == "" || json.Unmarshal([]byte(v), &val) != nil {
				return nil, &usageError{fmt.Sprintf("--param %q: want KEY=JSON (strings in quotes)", p)}
			}
			if h.Params == nil {
				h.Params = map[string]any{}
			}
			h.Params[k] = val
		}
		prefix, def := "ANTHROPIC", eval.DefaultAnthropicURL
		if readerName == "openai" {
			prefix, def = "OPENAI", eval.DefaultOpenAIURL
		}
		h.Model = firstNonEmpty(h.Model, os.Getenv(prefix+"_MODEL"))
		h.BaseURL = firstNonEmpty(h.BaseURL, os.Getenv(prefix+"_BASE_URL"), def)
		h.Key = firstNonEmpty(h.Key, os.Getenv(prefix+"_API_KEY"))
		if h.Model == "" {
			return nil, &usageError{fmt.Sprintf("--reader %s needs --model (or %s_MODEL)", readerName, prefix)}
		}
		if h.CacheDir == "" {
			if d, err := os.UserCacheDir(); err == nil {
				h.CacheDir = filepath.Join(d, "terse", "eval")
			}
		}
		return h, nil
	default:
		return nil, &usageError{fmt.Sprintf("unknown reader %q (want decode, anthropic or openai)", readerName)}
	}
}

// evalQuestions reads the documents (JSON documents and source files
// read) and generates their questions, with those of the questions file.
// A document that is not one, or too large for a model reader, is
// skipped, said on stderr.
func evalQuestions(docs, reads multiFlag, qfile string, reader eval.Reader, counter tokens.Counter, maxDoc, perDoc int, seed uint64, stderr io.Writer) ([]eval.Document, []eval.Question, error) {
	paths, err := docPaths(docs)
	if err != nil {
		return nil, nil, err
	}
	readPaths, err := sourcePaths(reads)
	if err != nil {
		return nil, nil, err
	}
	if len(paths) == 0 && len(readPaths) == 0 && qfile == "" {
		return nil, nil, &usageError{"no documents: give --docs DIR|FILE, --reads DIR|FILE or --questions-file"}
	}
	var (
		all       []eval.Document
		questions []eval.Question
		skipped   int
	)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		v, err := tree.Parse(data)
		if err != nil {
			fmt.Fprintf(stderr, "eval: skipping %s: not one JSON document\n", p)
			skipped++
			continue
		}
		if _, isModel := reader.(*eval.HTTPReader); isModel && maxDoc > 0 && counter.Count(string(tree.AppendJSON(nil, v))) > maxDoc {
			fmt.Fprintf(stderr, "eval: skipping %s: more than --max-doc-tokens %d\n", p, maxDoc)
			skipped++
			continue
		}
		d := eval.Document{Name: p, Value: v}
		all = append(all, d)
		questions = append(questions, eval.Generate(d, perDoc, seed)...)
	}
	for _, p := range readPaths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
			fmt.Fprintf(stderr, "eval: skipping %s: not text\n", p)
			skipped++
			continue
		}
		if _, isModel := reader.(*eval.HTTPReader); isModel && maxDoc > 0 && counter.Count(eval.ReadGutter(string(data))) > maxDoc {
			fmt.Fprintf(stderr, "eval: skipping %s: more than --max-doc-tokens %d\n", p, maxDoc)
			skipped++
			continue
		}
		d := eval.ReadDocument(p, string(data))
		all = append(all, d)
		questions = append(questions, eval.GenerateReads(d, perDoc, seed)...)
	}
	if qfile != "" {
		qs, inline, err := loadQuestionFile(qfile, &all)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, inline...)
		if _, ok := reader.(eval.DecodeReader); ok {
			n := 0
			for _, q := range qs {
				if q.Query != nil {
					qs[n] = q
					n++
				}
			}
			if n < len(qs) {
				fmt.Fprintf(stderr, "eval: the decode reader cannot answer hand-written questions; %d left out\n", len(qs)-n)
			}
			qs = qs[:n]
		}
		questions = append(questions, qs...)
	}
	if len(questions) == 0 {
		return nil, nil, errors.New("no questions: the documents have no list, key or scalar field to ask about")
	}
	return all, questions, nil
}

// confirmSend prints, for a model reader, what the run will send and
// cost; without yes it sends nothing (errNeedsYes).
func confirmSend(plan *eval.Plan, reader eval.Reader, priceIn, priceOut float64, yes bool, stderr io.Writer) error {
	if _, ok := reader.(*eval.HTTPReader); ok {
		est := plan.Estimate()
		cost := "cost unknown (give --price-in and --price-out, dollars per million tokens)"
		if priceIn > 0 || priceOut > 0 {
			cost = fmt.Sprintf("about $%.2f", est.Cost(priceIn, priceOut))
		}
		if u, err := url.Parse(reader.(*eval.HTTPReader).BaseURL); err == nil && (u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1") && priceIn == 0 {
			cost = "local model"
		}
		fmt.Fprintf(stderr, "eval: will send %d requests to %s (%d cached): about %d input tokens (%s) and at most %d output tokens; %s\n",
			est.Requests, reader.Name(), est.Cached, est.InputTokens, est.Tokenizer, est.OutputTokens, cost)
		if est.Requests > 0 && !yes {
			fmt.Fprintln(stderr, "eval: nothing sent; run again with --yes to send")
			return errNeedsYes
		}
	}
	return nil
}

// firstNonEmpty returns the first non-empty string.
func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// docPaths expands directories into their *.json files, sorted.
func docPaths(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, ".json") {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	// A file named twice (directly and through its directory) is read once.
	seen := map[string]bool{}
	n := 0
	for _, p := range out {
		c := filepath.Clean(p)
		if !seen[c] {
			seen[c] = true
			out[n] = c
			n++
		}
	}
	return out[:n], nil
}

// sourceExts are the file names --reads takes from a directory.
var sourceExts = []string{".go", ".py", ".js", ".jsx", ".ts", ".tsx", ".rs", ".java", ".kt", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".ex", ".exs", ".swift", ".php", ".sh", ".sql", ".md", ".toml", ".yaml", ".yml"}

// sourcePaths expands directories into their source files, sorted (a
// file given by name is taken whatever its name).
func sourcePaths(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, filepath.Clean(a))
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != a && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && slices.Contains(sourceExts, filepath.Ext(p)) {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	return slices.Compact(out), nil
}

// loadQuestionFile reads a question file and the documents it names
// (relative to the file), adding those not loaded yet to docs.
func loadQuestionFile(path string, docs *[]eval.Document) ([]eval.Question, []eval.Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	qs, inline, err := eval.ParseQuestions(f, path)
	if err != nil {
		return nil, nil, err
	}
	have := map[string]bool{}
	for _, d := range *docs {
		have[d.Name] = true
	}
	for i := range qs {
		if strings.HasPrefix(qs[i].Doc, path+":") {
			continue // inline
		}
		p := qs[i].Doc
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		qs[i].Doc = p
		if have[p] {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", qs[i].ID, err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", qs[i].ID, p, err)
		}
		*docs = append(*docs, eval.Document{Name: p, Value: v})
		have[p] = true
	}
	return qs, inline, nil
}

// writeEval writes the report files and prints the Markdown.
func writeEval(rep *eval.Report, qs []eval.Question, dir string, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, fn func(io.Writer) error) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	if err := write("report.md", rep.WriteMarkdown); err != nil {
		return err
	}
	if err := write("report.json", rep.WriteJSON); err != nil {
		return err
	}
	if err := write("chart.svg", rep.WriteSVG); err != nil {
		return err
	}
	err := write("questions.jsonl", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, q := range qs {
			line := struct {
				Document string `json:"document"`
				Question string `json:"question"`
				Answer   string `json:"answer"`
				Kind     string `json:"kind"`
			}{q.Doc, q.Text, q.Answer, q.Kind}
			if _, err := os.Stat(q.Doc); err != nil {
				continue // an inline document
			}
			if abs, err := filepath.Abs(q.Doc); err == nil {
				line.Document = abs
			}
			if err := enc.Encode(line); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rep.WriteMarkdown(stdout)
}
