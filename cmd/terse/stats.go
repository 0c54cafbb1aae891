package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/meter"
	"github.com/terse-dev/terse/telemetry"
)

const statsDoc = `
Stats reads the telemetry terse wrote ([telemetry] enabled = true in the
config) and prints what it saved: in total, split into what was saved
losslessly (encoding, dedup) and what was left out (declared in-band:
fit, filter, history, stale), by source (filter, dedup,
encoding, fit, history, stale), by tool (hashed unless tool names were
opted into) and endpoint class, by output format, by text shape and
shaping class (lossless and display savings apart from what declared
elisions left out), and by session; the
biggest token sinks (tools whose results the model read most); hints
emitted, whose tokens are already netted out of every saving; and the
tools left untouched, with why (excluded, too small, too large, error, no
saving). Every figure is in tokens of the named tokenizer, against compact
JSON of the input (or the input text).

DIR defaults to the config's [telemetry] dir, else the user config
directory's terse/telemetry. Lines that are not events (truncated,
foreign) are skipped and counted.

With --api FILE, stats reads instead the stats file of terse api
(--stats-file; FILE.1 too when it was rotated) and prints the costs in USD
computed from the provider's own usage: billed, and the original requests
as modeled, in total, by model and by conversation; the A/B holdout's two
arms (terse api --holdout SHARE) with a bootstrap confidence interval of
the difference; the tokenizer calibration learnt per model family and
the window ratio it gives (estimated); and, when the provider's cache
diagnostics were asked for (terse api --cache-diagnostics) or the client
asked for its own, the cache misses they reported by cache_miss_reason,
those at terse's prefix changes apart from the client's own. It shows
model ids, conversation hashes and numbers only.

Examples:
  terse stats
  terse stats --api ~/.local/state/terse/api-stats.jsonl
  terse stats --since 7d --json ~/.config/terse/telemetry
  terse stats --entry hook
`

func runStats(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("stats", "[--json] [--since DURATION] [--top N] [--entry NAME] [--config FILE] [DIR | --api FILE]", statsDoc, stdout, stderr)
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	since := fs.String("since", "", "only events newer than this `duration` (\"36h\", \"7d\")")
	top := fs.Int("top", 10, "rows per breakdown")
	cfgPath := fs.String("config", "", "terse config `FILE` whose [telemetry] dir to read")
	entry := fs.String("entry", "", "only events of this entry `point` (proxy, gateway, api, compact, hook)")
	apiFile := fs.String("api", "", "read terse api's stats `FILE` (--stats-file) and report costs and the A/B holdout")
	pos, err := parseInterleaved(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return &usageError{"stats: at most one DIR"}
	}
	if *apiFile != "" {
		if len(pos) > 0 {
			return &usageError{"stats: --api FILE takes no DIR"}
		}
		recs, lines, skipped, err := readAPIStats(*apiFile)
		if err != nil {
			return err
		}
		rep := summarizeAPI(recs, lines, skipped)
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}
		printAPIStats(stdout, rep, *top)
		return nil
	}
	var from time.Time
	if *since != "" {
		d, err := parseSince(*since)
		if err != nil {
			return &usageError{"stats: --since: " + err.Error()}
		}
		from = time.Now().Add(-d)
	}
	dir, err := telemetryDir(first(pos), *cfgPath)
	if err != nil {
		return err
	}
	l, err := telemetry.ReadDir(dir, from)
	if err != nil {
		return err
	}
	if *entry != "" {
		l.Records = slices.DeleteFunc(l.Records, func(r telemetry.Record) bool { return r.Entry != *entry })
	}
	s := telemetry.Summarize(l)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	printStats(stdout, s, *top)
	return nil
}

// telemetryDir is DIR, else the config's [telemetry] dir, else the default.
func telemetryDir(arg, cfgPath string) (string, error) {
	if arg != "" {
		return arg, nil
	}
	if cfgPath != "" {
		c, err := config.Load(cfgPath)
		if err != nil {
			return "", err
		}
		if c.Telemetry.Dir != "" {
			return c.Telemetry.Dir, nil
		}
	}
	return telemetry.DefaultDir()
}

// parseSince parses a Go duration, also accepting a number of days ("7d").
func parseSince(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		return time.Duration(n * 24 * float64(time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad duration %q (want e.g. \"36h\" or \"7d\")", s)
	}
	return d, nil
}

func printStats(w io.Writer, s *telemetry.Summary, top int) {
	printStatsHead(w, s)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	printBySource(w, tw, s)
	statsTable(w, tw, top, "by tool", s.ByTool)
	statsTable(w, tw, top, "by endpoint class", s.ByClass)
	statsTable(w, tw, top, "by format", s.ByFormat)
	printTextShaping(w, tw, s, top)
	statsTable(w, tw, top, "by session", s.BySession)
	statsTable(w, tw, top, "biggest token sinks (tokens the model read)", s.Sinks)
	printUntouched(w, s, top)
	printErrors(w, s)
}

// printStatsHead writes what the summary covers and what the model read
// of it, saved losslessly and left out apart.
func printStatsHead(w io.Writer, s *telemetry.Summary) {
	toks := strings.Join(s.Tokenizers, ", ")
	if toks == "" {
		toks = "none recorded"
	}
	fmt.Fprintf(w, "%s in %s (%s", plural(s.Events, "result"), plural(s.Sessions, "session"), plural(s.Files, "file"))
	if s.Skipped > 0 {
		fmt.Fprintf(w, ", %s skipped", plural(s.Skipped, "line"))
	}
	fmt.Fprintf(w, ")\ntokens of %s, against %s\n\n", toks, s.Baseline)
	t := s.Total
	// What was re-encoded or referenced is all still there; what fit,
	// filter, history and stale left out is not (declared, and mostly
	// recoverable): never one figure for both.
	var lossless, leftOut float64
	for k, v := range s.BySource {
		if meter.Lossless(k) {
			lossless += v
		} else {
			leftOut += v
		}
	}
	fmt.Fprintf(w, "read by the model: %.0f of %.0f tokens, net of %.0f tokens of hints and id lines\n",
		t.TokensOut, t.TokensIn, s.HintCost)
	fmt.Fprintf(w, "  saved losslessly (encoding, dedup): %.0f (%s)\n", lossless, pctOrZero(lossless, t.TokensIn))
	fmt.Fprintf(w, "  left out, declared (fit, filter, history, stale, applied, elided): %.0f (%s)\n", leftOut, pctOrZero(leftOut, t.TokensIn))
	if other := t.Saved - lossless - leftOut; other != 0 {
		// Results whose events name no source (written before sources
		// were recorded, or skipped ones): shown so the lines add up.
		fmt.Fprintf(w, "  not attributed to a source: %.0f (%s)\n", other, pctOrZero(other, t.TokensIn))
	}
	fmt.Fprintf(w, "dedup: %.0f hits, %.0f misses; %.0f chunk fetches; %.0f compactions\n", s.DedupHits, s.DedupMisses, s.ChunkFetches, s.Compactions)
}

// printBySource writes the savings by source, and the hints emitted.
func printBySource(w io.Writer, tw *tabwriter.Writer, s *telemetry.Summary) {
	t := s.Total
	fmt.Fprintln(w, "\nby source")
	for _, k := range telemetry.SourceNames {
		if v, ok := s.BySource[k]; ok {
			fmt.Fprintf(tw, "%s\t%.0f\t%s\t\n", k, v, pctOf(v, t.TokensIn))
		}
	}
	tw.Flush()
	if len(s.Hints) > 0 {
		fmt.Fprint(w, "\nhints emitted:")
		for _, k := range slices.Sorted(maps.Keys(s.Hints)) {
			fmt.Fprintf(w, " %s %.0f", k, s.Hints[k])
		}
		fmt.Fprintln(w, " (their tokens are in what the model read)")
	}
}

// statsTable writes a table of rows (the first top of them) under title;
// nothing when there are none.
func statsTable(w io.Writer, tw *tabwriter.Writer, top int, title string, rows []telemetry.Row) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", title)
	fmt.Fprintf(tw, "\tcalls\ttokens in\ttokens out\tsaved\t%%\t\n")
	for i, r := range rows {
		if i == top {
			fmt.Fprintf(tw, "(%d more)\t\t\t\t\t\t\n", len(rows)-top)
			break
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t\n", r.Key, r.Calls, r.TokensIn, r.TokensOut, r.Saved, r.Pct())
	}
	tw.Flush()
}

// printTextShaping writes the text results by shape and class, and what
// each class of shaping saved.
func printTextShaping(w io.Writer, tw *tabwriter.Writer, s *telemetry.Summary, top int) {
	if len(s.ByShapeClass) > 0 {
		statsTable(w, tw, top, "text results by shape and class (elide: what a declared elision left out, recoverable with terse chunk)", s.ByTextShape)
		fmt.Fprint(w, "text shaping:")
		for _, k := range append([]string{"lossless", "display", "elide"}, "unshaped") {
			for _, r := range s.ByShapeClass {
				if r.Key != k {
					continue
				}
				switch k {
				case "elide":
					fmt.Fprintf(w, " left out by declared elisions %.0f of %.0f tokens (%.0f results);", r.Saved, r.TokensIn, r.Calls)
				case "unshaped":
					fmt.Fprintf(w, " %.0f results left as they are.", r.Calls)
				default:
					fmt.Fprintf(w, " saved %s %.0f of %.0f tokens (%.0f results);", k, r.Saved, r.TokensIn, r.Calls)
				}
			}
		}
		fmt.Fprintln(w)
	}
}

// printUntouched writes the tools left untouched and why (the first top).
func printUntouched(w io.Writer, s *telemetry.Summary, top int) {
	if len(s.Untouched) > 0 {
		fmt.Fprintln(w, "\ntools left untouched")
		for i, u := range s.Untouched {
			if i == top {
				fmt.Fprintf(w, "  (%d more)\n", len(s.Untouched)-top)
				break
			}
			var why []string
			for _, k := range slices.Sorted(maps.Keys(u.Reasons)) {
				why = append(why, fmt.Sprintf("%s %.0f", strings.ReplaceAll(k, "_", " "), u.Reasons[k]))
			}
			fmt.Fprintf(w, "  %s (%s): %.0f calls: %s\n", u.Tool, u.Class, u.Calls, strings.Join(why, ", "))
		}
	}
}

// printErrors writes the errors by kind.
func printErrors(w io.Writer, s *telemetry.Summary) {
	if len(s.Errors) > 0 {
		fmt.Fprint(w, "\nerrors:")
		for _, k := range slices.Sorted(maps.Keys(s.Errors)) {
			fmt.Fprintf(w, " %s %.0f", k, s.Errors[k])
		}
		fmt.Fprintln(w)
	}
}

func pctOrZero(v, of float64) string {
	if of == 0 {
		return "0.0%"
	}
	return pctOf(v, of)
}

func pctOf(v, of float64) string {
	if of == 0 {
		return ""
	}
	return strconv.FormatFloat(100*v/of, 'f', 1, 64) + "%"
}

var timeZero time.Time

// parseInterleaved parses flags that may come before or after the
// positional arguments, and returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args, stdout); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		rest := fs.Args()
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
