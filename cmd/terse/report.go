package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

const reportDoc = `
Report measures what terse saves on real payloads. For each file under the
PATHs (directories are walked; hidden files are skipped) it prints:

  json    tokens of the compact JSON (for text files: of the text itself),
          the baseline every saving is measured against
  toon    tokens of TOON v4 with exact numbers and key order ("-" for text)
  auto    tokens of terse's auto encoding (docs/format.md); for Markdown
          with tables, of the csv_from_md rewrite; other text is unchanged
  saving  1 - auto/json
  ok      the lossless check: the auto text is decoded and compared with the
          input (the identical ordered tree; for Markdown, the same text
          outside tables and the same table cells)
  formats the forms auto chose (kv, table, list, fence, legend, prefix,
          toon, json, csv_from_md, text)

then totals by shape and overall. Files that are neither JSON nor text
(invalid UTF-8) are skipped. A progress bar is drawn on standard error when
it is a terminal. The exit status is 1 if any lossless check fails.

Examples:
  terse report ../corpus
  terse report --tokenizer cl100k_base payload.json
  terse report --json ../corpus/github | jq '.total.saving'
`

// reportRow is one file's line of the report.
type reportRow struct {
	File    string   `json:"file"`
	Shape   string   `json:"shape"`
	JSON    int      `json:"json_tokens"`
	TOON    int      `json:"toon_tokens,omitempty"`
	Auto    int      `json:"auto_tokens"`
	Saving  float64  `json:"saving"`
	OK      bool     `json:"lossless"`
	Formats []string `json:"formats"`
	Error   string   `json:"error,omitempty"`
}

// reportTotal sums rows.
type reportTotal struct {
	Shape  string  `json:"shape,omitempty"`
	Files  int     `json:"files"`
	JSON   int     `json:"json_tokens"`
	TOON   int     `json:"toon_tokens"`
	Auto   int     `json:"auto_tokens"`
	Saving float64 `json:"saving"`
	Failed int     `json:"lossless_failures"`
}

func (t *reportTotal) add(r reportRow) {
	t.Files++
	t.JSON += r.JSON
	t.TOON += r.TOON
	if r.TOON == 0 {
		t.TOON += r.JSON
	}
	t.Auto += r.Auto
	if !r.OK {
		t.Failed++
	}
	if t.JSON > 0 {
		t.Saving = 1 - float64(t.Auto)/float64(t.JSON)
	}
}

func runReport(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fset := newFlagSet("report", "[--tokenizer o200k_base|cl100k_base|estimate] [--json] PATH...", reportDoc, stdout, stderr)
	name := fset.String("tokenizer", "o200k_base", "`TOKENIZER`: o200k_base, cl100k_base or estimate")
	asJSON := fset.Bool("json", false, "print one JSON object instead of tables")
	if err := parseFlags(fset, args, stdout); err != nil {
		return err
	}
	counter, err := tokens.Get(*name)
	if err != nil {
		return &usageError{err.Error()}
	}
	if fset.NArg() == 0 {
		return &usageError{"report: want at least one PATH (see terse report --help)"}
	}
	files, err := reportFiles(fset.Args())
	if err != nil {
		return err
	}
	rows, err := measureFiles(ctx, files, counter, stderr)
	if err != nil {
		return err
	}
	total, shapes := reportTotals(rows)
	if *asJSON {
		if err := writeReportJSON(stdout, counter, rows, shapes, total); err != nil {
			return err
		}
	} else {
		writeReportTables(stdout, counter, rows, shapes, total)
	}
	if total.Failed > 0 {
		return fmt.Errorf("report: %d lossless check(s) failed", total.Failed)
	}
	return nil
}

// reportFiles lists the files under roots, leaving out hidden ones.
func reportFiles(roots []string) ([]string, error) {
	var files []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != root && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// measureFiles measures each file, with a progress bar on stderr.
func measureFiles(ctx context.Context, files []string, counter tokens.Counter, stderr io.Writer) ([]reportRow, error) {
	bar := newProgress(stderr, len(files))
	var rows []reportRow
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			bar.done()
			return nil, err
		}
		data, err := os.ReadFile(f)
		if err != nil {
			bar.done()
			return nil, err
		}
		if r, ok := reportFile(f, data, counter); ok {
			rows = append(rows, r)
		}
		bar.step()
	}
	bar.done()
	return rows, nil
}

// reportTotals sums the rows, in all and by shape (in shape order).
func reportTotals(rows []reportRow) (reportTotal, []reportTotal) {
	var total reportTotal
	byShape := map[string]*reportTotal{}
	for _, r := range rows {
		total.add(r)
		if byShape[r.Shape] == nil {
			byShape[r.Shape] = &reportTotal{Shape: r.Shape}
		}
		byShape[r.Shape].add(r)
	}
	var shapes []reportTotal
	for _, s := range byShape {
		shapes = append(shapes, *s)
	}
	slices.SortFunc(shapes, func(a, b reportTotal) int { return strings.Compare(a.Shape, b.Shape) })
	return total, shapes
}

// writeReportJSON writes the report as one JSON object.
func writeReportJSON(stdout io.Writer, counter tokens.Counter, rows []reportRow, shapes []reportTotal, total reportTotal) error {
	out := struct {
		Tokenizer string        `json:"tokenizer"`
		Exact     bool          `json:"exact"`
		Baseline  string        `json:"baseline"`
		Files     []reportRow   `json:"files"`
		Shapes    []reportTotal `json:"shapes"`
		Total     reportTotal   `json:"total"`
	}{counter.Name(), counter.Exact(), "compact JSON", rows, shapes, total}
	if out.Files == nil {
		out.Files = []reportRow{}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeReportTables writes the report as tables: one row per file, then
// the totals by shape.
func writeReportTables(stdout io.Writer, counter tokens.Counter, rows []reportRow, shapes []reportTotal, total reportTotal) {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%8s %8s %8s %7s\tok\tshape\tformats\tfile\n", "json", "toon", "auto", "saving")
	for _, r := range rows {
		toonCol := "-"
		if r.TOON > 0 {
			toonCol = fmt.Sprint(r.TOON)
		}
		ok := "ok"
		if !r.OK {
			ok = "FAIL"
		}
		fmt.Fprintf(tw, "%8d %8s %8d %7s\t%s\t%s\t%s\t%s\n", r.JSON, toonCol, r.Auto, pct(r.Saving), ok, r.Shape, strings.Join(r.Formats, ","), r.File)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nTotals (%s tokens, baseline compact JSON):\n", counter.Name())
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%5s %8s %8s %8s %7s %6s\tshape\n", "files", "json", "toon", "auto", "saving", "failed")
	for _, s := range append(shapes, total) {
		label := s.Shape
		if label == "" {
			label = "total"
		}
		fmt.Fprintf(tw, "%5d %8d %8d %8d %7s %6d\t%s\n", s.Files, s.JSON, s.TOON, s.Auto, pct(s.Saving), s.Failed, label)
	}
	tw.Flush()
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// reportFile measures one file; ok is false for files it skips.
func reportFile(name string, data []byte, c tokens.Counter) (reportRow, bool) {
	r := reportRow{File: name}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		if v, err := tree.Parse(trimmed); err == nil {
			r.Shape = string(render.ShapeOf(v))
			r.JSON = c.Count(string(tree.AppendJSON(nil, v)))
			r.TOON = c.Count(string(toon.Append(nil, v, &toon.EncodeOptions{ExactNumbers: true, KeepKeyOrder: true})))
			text, formats, err := render.Encode(v, &render.Options{Counter: c, SkipVerify: true})
			if err != nil {
				r.Error = err.Error()
				return r, true
			}
			r.Auto = c.Count(text)
			r.Formats = formatNames(formats)
			if err := render.Verify(text, v); err != nil {
				r.Error = err.Error()
			} else {
				r.OK = true
			}
			r.Saving = saving(r.JSON, r.Auto)
			return r, true
		}
	}
	if !isText(data) {
		return r, false
	}
	text := string(data)
	r.Shape = string(render.DetectText(text))
	r.JSON = c.Count(text)
	r.Auto, r.OK, r.Formats = r.JSON, true, []string{"text"}
	if out, ok := render.EncodeMarkdown(text); ok {
		if n := c.Count(out); n < r.JSON {
			r.Auto, r.Formats = n, []string{string(render.CSVFromMD)}
			back, err := render.DecodeMarkdown(out)
			if err != nil {
				r.OK, r.Error = false, err.Error()
			} else if !render.EqualMarkdown(back, text) {
				r.OK, r.Error = false, "decoded Markdown differs"
			}
		}
	}
	r.Saving = saving(r.JSON, r.Auto)
	return r, true
}

func saving(base, n int) float64 {
	if base == 0 {
		return 0
	}
	return 1 - float64(n)/float64(base)
}

func formatNames(fs []render.Format) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

// isText reports whether data is UTF-8 without NUL bytes.
func isText(data []byte) bool {
	return !bytes.ContainsRune(data, 0) && strings.ToValidUTF8(string(data), "\uFFFD") == string(data)
}

// progress is a one-line bar on a terminal, nothing otherwise.
type progress struct {
	w      io.Writer
	n, i   int
	active bool
}

func newProgress(w io.Writer, n int) *progress {
	p := &progress{w: w, n: n}
	if f, ok := w.(*os.File); ok && n > 1 {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.active = true
		}
	}
	return p
}

func (p *progress) step() {
	p.i++
	if !p.active {
		return
	}
	const width = 30
	done := width * p.i / p.n
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d", strings.Repeat("=", done), strings.Repeat(" ", width-done), p.i, p.n)
}

func (p *progress) done() {
	if p.active {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
