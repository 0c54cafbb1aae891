package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/terse-dev/terse/apiproxy"
)

// apiBootstrap are the resamples and seed of the A/B interval: fixed, so
// the same stats file always gives the same interval.
const (
	apiResamples = 2000
	apiSeed      = 1
)

// apiReport is what terse stats --api prints: costs from the provider's
// usage, in total, per model, per conversation, and per arm of the
// holdout. It holds no content: model ids, conversation hashes and
// numbers.
type apiReport struct {
	Lines        int                                `json:"lines"`
	Skipped      int                                `json:"skipped"`
	Total        apiRow                             `json:"total"`
	Models       map[string]apiRow                  `json:"models"`
	Conversation map[string]apiRow                  `json:"conversations"`
	AB           apiproxy.Comparison                `json:"ab"`
	Calibration  map[string]apiproxy.CalibrationRow `json:"calibration,omitempty"`
	Diagnostics  *apiproxy.MissCounts               `json:"cache_diagnostics,omitempty"`
}

// apiRow sums requests' costs.
type apiRow struct {
	Requests  int     `json:"requests"`
	WithUsage int     `json:"with_usage"`
	Billed    float64 `json:"billed"`
	Direct    float64 `json:"direct_modeled"`
	Price     string  `json:"price,omitempty"`
}

func (r *apiRow) add(x *apiproxy.Record) {
	r.Requests++
	if x.Usage.Reported > 0 {
		r.WithUsage++
		r.Billed += x.Cost
		r.Direct += x.DirectCost
		r.Price = x.Price
	}
}

// readAPIStats reads a stats file of terse api, with its rotated
// predecessor FILE.1 first when there is one.
func readAPIStats(path string) ([]apiproxy.Record, int, int, error) {
	var recs []apiproxy.Record
	lines, skipped := 0, 0
	for i, p := range []string{path + ".1", path} {
		f, err := os.Open(p)
		if err != nil {
			if i == 0 && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, 0, 0, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines++
			var r apiproxy.Record
			if json.Unmarshal(sc.Bytes(), &r) != nil || r.Path == "" {
				skipped++
				continue
			}
			recs = append(recs, r)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s: %w", p, err)
		}
	}
	return recs, lines, skipped, nil
}

func summarizeAPI(recs []apiproxy.Record, lines, skipped int) *apiReport {
	rep := &apiReport{Lines: lines, Skipped: skipped, Models: map[string]apiRow{}, Conversation: map[string]apiRow{}}
	for i := range recs {
		r := &recs[i]
		rep.Total.add(r)
		if r.CacheDiagnostics != nil {
			if rep.Diagnostics == nil {
				rep.Diagnostics = &apiproxy.MissCounts{}
			}
			rep.Diagnostics.Add(r.CacheDiagnostics)
		}
		if r.Model != "" {
			m := rep.Models[r.Model]
			m.add(r)
			rep.Models[r.Model] = m
		}
		if r.Conversation != "" {
			c := rep.Conversation[r.Conversation]
			c.add(r)
			rep.Conversation[r.Conversation] = c
		}
	}
	rep.Total.Price = ""
	rep.AB = apiproxy.CompareArms(recs, apiResamples, apiSeed)
	rep.Calibration = apiproxy.Calibrate(recs)
	return rep
}

// usd prints a cost, or "–" for none.
func usd(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if v < 0 {
		return fmt.Sprintf("-$%.4f", -v)
	}
	return fmt.Sprintf("$%.4f", v)
}

func ratio(a, b float64) string {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "–"
	}
	return fmt.Sprintf("%.3f×", a/b)
}

func printAPIStats(w io.Writer, rep *apiReport, top int) {
	t := rep.Total
	fmt.Fprintf(w, "terse api: %s in %s (%s", plural(t.Requests, "request"), plural(len(rep.Conversation), "conversation"), plural(rep.Lines, "line"))
	if rep.Skipped > 0 {
		fmt.Fprintf(w, ", %d skipped", rep.Skipped)
	}
	fmt.Fprintf(w, "); costs in USD from the provider's usage\n")
	fmt.Fprintf(w, "billed: %s for %s with usage; the original requests, modeled: %s (billed %s of it)\n",
		usd(t.Billed), plural(t.WithUsage, "request"), usd(t.Direct), ratio(t.Billed, t.Direct))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(rep.Models) > 0 {
		fmt.Fprintln(w, "\nby model")
		fmt.Fprintf(tw, "  model\trequests\twith usage\tbilled\toriginal (modeled)\tprice\n")
		for _, m := range slices.Sorted(maps.Keys(rep.Models)) {
			x := rep.Models[m]
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%s\t%s\n", m, x.Requests, x.WithUsage, usd(x.Billed), usd(x.Direct), x.Price)
		}
		tw.Flush()
	}
	if len(rep.Conversation) > 0 {
		keys := slices.Sorted(maps.Keys(rep.Conversation))
		slices.SortStableFunc(keys, func(a, b string) int {
			return -cmpFloat(rep.Conversation[a].Billed, rep.Conversation[b].Billed)
		})
		fmt.Fprintln(w, "\nby conversation (largest billed first)")
		fmt.Fprintf(tw, "  conversation\trequests\twith usage\tbilled\toriginal (modeled)\n")
		for i, k := range keys {
			if i == top {
				fmt.Fprintf(tw, "  (%d more)\t\t\t\t\n", len(keys)-top)
				break
			}
			x := rep.Conversation[k]
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%s\n", k, x.Requests, x.WithUsage, usd(x.Billed), usd(x.Direct))
		}
		tw.Flush()
	}
	ab := rep.AB
	fmt.Fprintln(w, "\nA/B holdout (billed, from the provider's usage)")
	if ab.Terse.Requests+ab.Holdout.Requests == 0 {
		fmt.Fprintf(w, "  no request in either arm (start terse api with --holdout SHARE)\n")
	} else {
		fmt.Fprintf(tw, "  arm\tconversations\trequests\tbilled\tper request\tper conversation\n")
		for _, a := range []apiproxy.ArmStats{ab.Terse, ab.Holdout} {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%s\t%s\n", a.Arm, a.Conversations, a.Requests, usd(a.Cost), usd(a.PerRequest), usd(a.PerConversation))
		}
		tw.Flush()
		for _, d := range []struct {
			name string
			iv   apiproxy.Interval
		}{{"per request", ab.PerRequest}, {"per conversation", ab.PerConversation}} {
			ci := "no interval: fewer than 2 conversations in an arm"
			if d.iv.Bootstrapped {
				ci = fmt.Sprintf("95%% CI %s to %s", usd(d.iv.Lo), usd(d.iv.Hi))
			}
			r := "–"
			if d.iv.Ratio != 0 {
				r = fmt.Sprintf("%.3f×", d.iv.Ratio)
			}
			fmt.Fprintf(w, "  terse − holdout, %s: %s (%s); terse/holdout %s\n", d.name, usd(d.iv.Diff), ci, r)
		}
		fmt.Fprintf(w, "  (bootstrap: %d resamples of each arm's conversations, seed %d)\n", ab.Resamples, ab.Seed)
	}
	if ab.Unassigned > 0 {
		fmt.Fprintf(w, "  %s with usage in no arm (holdout off, bypassed, or not decodable)\n", plural(ab.Unassigned, "request"))
	}
	printCalibration(w, rep.Calibration)
	printDiagnostics(w, rep.Diagnostics)
}

// printDiagnostics prints the cache misses the provider's diagnostics
// reported, by origin and cache_miss_reason.
func printDiagnostics(w io.Writer, d *apiproxy.MissCounts) {
	if d.Empty() {
		return
	}
	fmt.Fprintln(w, "\ncache misses (the provider's cache diagnostics)")
	fmt.Fprintf(w, "  %s attached by terse, %s the client's own; %s with diagnostics: %d no divergence, %d still compared, %d no comparison",
		plural(d.Attached, "request"), plural(d.Client, "request"), plural(d.Reported, "response"), d.NoDivergence, d.Pending, sumCounts(d.NoComparison))
	if len(d.NoComparison) > 0 {
		fmt.Fprintf(w, " (")
		for i, k := range slices.Sorted(maps.Keys(d.NoComparison)) {
			if i > 0 {
				fmt.Fprintf(w, ", ")
			}
			fmt.Fprintf(w, "%s %d", k, d.NoComparison[k])
		}
		fmt.Fprintf(w, ")")
	}
	fmt.Fprintf(w, ", %s\n", misses(d.Total("").Requests))
	if len(d.Misses) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  at\tcache_miss_reason\trequests\tmissed tokens\n")
	for _, at := range []string{apiproxy.MissAtTerse, apiproxy.MissAtClient} {
		rs := d.Misses[at]
		for _, k := range slices.Sorted(maps.Keys(rs)) {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\n", at, k, rs[k].Requests, rs[k].Missed)
		}
	}
	tw.Flush()
	t, c := d.Total(apiproxy.MissAtTerse), d.Total(apiproxy.MissAtClient)
	fmt.Fprintf(w, "  at terse's prefix changes (a trim or edit point): %s, %d tokens; the client's own: %s, %d tokens\n",
		misses(t.Requests), t.Missed, misses(c.Requests), c.Missed)
}

func misses(n int) string {
	if n == 1 {
		return "1 miss"
	}
	return fmt.Sprintf("%d misses", n)
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// printCalibration prints the learnt tokenizer ratios, labelled as the
// estimates they are.
func printCalibration(w io.Writer, c map[string]apiproxy.CalibrationRow) {
	if len(c) == 0 {
		return
	}
	fmt.Fprintln(w, "\ntokenizer calibration (estimated): provider input tokens per o200k_base token of the request sent")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  family\trequests\tprovider tokens\to200k tokens\tratio\twindow ratio\n")
	for _, f := range slices.Sorted(maps.Keys(c)) {
		x := c[f]
		r, src := apiproxy.WindowRatio(f, c)
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%.3f\t%.3f (%s)\n", f, x.Requests, x.Provider, x.Terse, x.Ratio, r, src)
	}
	tw.Flush()
	fmt.Fprintf(w, "  (window ratio: what new conversations of the family are trimmed by, terse's estimate × ratio against the window;\n"+
		"   learnt from %d requests on, bounded to 1–%g, else %g for Claude from Opus 4.7 on and 1 for the others)\n",
		apiproxy.MinCalibrationRequests, apiproxy.MaxWindowRatio, apiproxy.NewTokenizerRatio)
}
