package meter

import (
	"encoding/json"
	"testing"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/telemetry"
)

func TestSettleAddsUp(t *testing.T) {
	s := Saved{"dedup": 40, "encoding": -3}
	s.Settle(50, "history")
	if s.Sum() != 50 || s["history"] != 13 {
		t.Errorf("settled = %v, want parts summing to 50 with history 13", s)
	}
	s.Settle(50, "history") // already adds up: nothing moves
	if s["history"] != 13 {
		t.Errorf("settling again moved history to %d", s["history"])
	}
	e := Saved{}
	e.Settle(0, "encoding")
	if len(e) != 0 {
		t.Errorf("settling nothing wrote %v", e)
	}
}

func TestBySource(t *testing.T) {
	s := Saved{"filter": 1, "dedup": 2, "encoding": 3, Envelope: 4, "history": 5, Catalog: 100, "bogus": 7}
	got := s.BySource()
	want := [telemetry.NumSources]int{}
	want[telemetry.SrcFilter], want[telemetry.SrcDedup], want[telemetry.SrcEncoding], want[telemetry.SrcHistory] = 1, 2, 7, 5
	if got != want {
		t.Errorf("BySource = %v, want %v (the envelope is encoding; the catalogue and unknown names are not event sources)", got, want)
	}
}

func TestLine(t *testing.T) {
	s := Saved{"history": 5, Envelope: 2, "zero": 0}
	if got, want := s.Line([]string{"history", "dedup"}), " history 5 dedup 0 envelope 2"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

func TestTally(t *testing.T) {
	var x Tally
	x.Add(100, 60, Saved{"encoding": 40})
	x.Add(10, 10, nil)
	x.AddSaved(Saved{Catalog: 5})
	c := x.Clone()
	c.Saved["encoding"] = 0
	if x.Calls != 2 || x.TokensBefore != 110 || x.TokensAfter != 70 || x.Saved["encoding"] != 40 || x.Saved[Catalog] != 5 {
		t.Errorf("tally = %+v", x)
	}
	if got := x.Pct(); got < 36.36 || got > 36.37 {
		t.Errorf("Pct = %v, want 36.36…", got)
	}
	if (Tally{}).Pct() != 0 || (Tally{}).Clone().Saved == nil {
		t.Error("the zero Tally has a percentage, or its clone a nil Saved")
	}
	b, _ := json.Marshal(Tally{Calls: 1, Saved: Saved{}})
	if string(b) != `{"calls":1,"tokens_before":0,"tokens_after":0,"saved_by_source":{}}` {
		t.Errorf("JSON = %s", b)
	}
}

// TestBaseline: a shaped result counts from compact JSON of its input,
// never from the indentation as sent; only one larger than that counts
// from the text as sent, which is counted only then.
func TestBaseline(t *testing.T) {
	counted := 0
	sent := func() int { counted++; return 115 }
	if got := Baseline(&terse.Report{RawTokens: 69, OutputTokens: 60}, sent); got != 69 || counted != 0 {
		t.Errorf("Baseline = %d (sent counted %d times), want compact JSON's 69, uncounted", got, counted)
	}
	if got := Baseline(&terse.Report{RawTokens: 69, OutputTokens: 75}, sent); got != 115 || counted != 1 {
		t.Errorf("Baseline of a result larger than compact JSON = %d, want the text as sent (115)", got)
	}
}

// TestLossless: terse stats splits the saving into what is all still
// there and what was left out, declared; every source is on one side.
func TestLossless(t *testing.T) {
	want := map[string]bool{"filter": false, "dedup": true, "encoding": true, "fit": false, "history": false, "stale": false, "applied": false, "elided": false,
		Envelope: true, Catalog: false}
	for _, src := range telemetry.SourceNames {
		if _, ok := want[src]; !ok {
			t.Errorf("source %q has no side", src)
		}
	}
	for src, w := range want {
		if Lossless(src) != w {
			t.Errorf("Lossless(%q) = %v", src, !w)
		}
	}
}
