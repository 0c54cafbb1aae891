package profile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/internal/fixture"
	"github.com/terse-dev/terse/profile"
	"github.com/terse-dev/terse/store"
)

// countHints counts the hints of each family in texts the model reads.
func countHints(texts ...string) map[string]int {
	n := map[string]int{}
	for _, t := range texts {
		n["ref"] += strings.Count(t, "> [ref: ")
		n["near_ref"] += strings.Count(t, "> [near-ref: ")
		n["id"] += strings.Count(t, "> [id: ")
		n["more"] += strings.Count(t, " whole with: ") // the chunk index of an elision
	}
	return n
}

// stripIDLine returns text without a leading dedup id line.
func stripIDLine(text string) string {
	if strings.HasPrefix(text, "> [id: ") {
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			return text[i+1:]
		}
	}
	return text
}

func readCorpus(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpus.Dir(t, "corpus"), name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestHintPolicy runs the same results through a pipeline under hint
// policies and counts the hints in what comes out.
func TestHintPolicy(t *testing.T) {
	ctx := context.Background()
	small := fixture.Items(8, "small")
	big := fixture.Items(200, "big")
	run := func(t *testing.T, src string, payloads ...[]byte) ([]terse.Result, *profile.HintCounter) {
		t.Helper()
		c, err := config.Parse([]byte(src), "t.toml")
		if err != nil {
			t.Fatal(err)
		}
		eff := profile.Resolve(c, profile.Context{ModelID: "claude-sonnet-4-5"})
		p, err := terse.New(&terse.Options{Format: "json", Budget: 300, Dedup: dedup.New(dedup.Options{}), Store: new(store.Mem)})
		if err != nil {
			t.Fatal(err)
		}
		hc := new(profile.HintCounter)
		var out []terse.Result
		for _, data := range payloads {
			r, err := p.Process(ctx, data, &terse.Request{Session: dedup.Key{Session: "s", Partition: "s/0"}, Hints: profile.Gate{E: &eff, C: hc}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Report.Budget > 0 && r.Report.OutputTokens > r.Report.Budget {
				t.Errorf("%d tokens over the budget of %d", r.Report.OutputTokens, r.Report.Budget)
			}
			out = append(out, r)
		}
		return out, hc
	}
	texts := func(rs []terse.Result) []string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Text)
		}
		return s
	}

	t.Run("defaults", func(t *testing.T) {
		rs, hc := run(t, "", small, small, small, big)
		got := countHints(texts(rs)...)
		if got["ref"] != 2 || got["id"] != 1 || got["more"] != 1 || hc.Count("ref") != 2 || hc.Count("more") != 1 {
			t.Errorf("hints %v, counted ref %d more %d", got, hc.Count("ref"), hc.Count("more"))
		}
	})
	t.Run("ref disabled", func(t *testing.T) {
		rs, _ := run(t, "[hints.ref]\nenabled = false\n[hints.near_ref]\nenabled = false\n", small, small)
		if got := countHints(texts(rs)...); got["ref"] != 0 || got["id"] != 0 {
			t.Errorf("hints %v, want no reference and no id line", got)
		}
		if rs[1].Text != rs[0].Text || rs[1].Report.Dedup {
			t.Errorf("the repeat is not shown in full: %.80q", rs[1].Text)
		}
	})
	t.Run("ref capped", func(t *testing.T) {
		rs, hc := run(t, "[hints.ref]\nmax_per_session = 1\n[hints.near_ref]\nenabled = false\n", small, small, small, small)
		got := countHints(texts(rs)...)
		if got["ref"] != 1 || hc.Count("ref") != 1 || !rs[1].Report.Dedup || rs[2].Report.Dedup {
			t.Errorf("hints %v, want one reference (the first repeat)", got)
		}
		// Once no reference can follow, no id line is shown either.
		if strings.HasPrefix(rs[3].Text, "> [id: ") {
			t.Errorf("id line after the cap: %.40q", rs[3].Text)
		}
	})
	t.Run("more disabled", func(t *testing.T) {
		rs, hc := run(t, "[hints.more]\nenabled = false\n", big)
		r := rs[0]
		if got := countHints(r.Text); got["more"] != 0 || r.Report.Truncated || r.Report.Budget != 0 || hc.Count("more") != 0 {
			t.Errorf("hints %v, truncated %v, budget %d", got, r.Report.Truncated, r.Report.Budget)
		}
		if stripIDLine(r.Text) != string(big) {
			t.Errorf("not the whole result: %d bytes of %d", len(r.Text), len(big))
		}
	})
	t.Run("more capped", func(t *testing.T) {
		rs, hc := run(t, "[hints.more]\nmax_per_session = 1\n", big, fixture.Items(150, "other"), fixture.Items(120, "third"))
		got := countHints(texts(rs)...)
		if got["more"] != 1 || hc.Count("more") != 1 || !rs[0].Report.Truncated || rs[1].Report.Truncated || rs[2].Report.Truncated {
			t.Errorf("hints %v, want the first result elided and the others whole", got)
		}
	})
}

// BenchmarkHintGate runs the pipeline on a corpus list under a budget
// (an elision, so "more" is asked) and on a repeat (a reference, so "ref"
// is taken), without a hint policy and with the default one, in the same
// run:
//
//	go test -run '^$' -bench HintGate -benchtime 5x .
func BenchmarkHintGate(b *testing.B) {
	data := readCorpus(b, "github/pygithub__repo-pulls.json")
	eff := profile.Resolve(nil, profile.Context{})
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		budget int
	}{{"elided", 8000}, {"ref", 1 << 30}} {
		for _, gated := range []bool{false, true} {
			name := tc.name + "/nil"
			if gated {
				name = tc.name + "/gate"
			}
			b.Run(name, func(b *testing.B) {
				p, err := terse.New(&terse.Options{Budget: tc.budget, Store: &store.Mem{}, Dedup: dedup.New(dedup.Options{})})
				if err != nil {
					b.Fatal(err)
				}
				req := &terse.Request{Session: dedup.Key{Session: "s", Partition: "s/0"}}
				if gated {
					req.Hints = profile.Gate{E: &eff, C: new(profile.HintCounter)}
				}
				if _, err := p.Process(ctx, data, req); err != nil { // the first showing
					b.Fatal(err)
				}
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := p.Process(ctx, data, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
