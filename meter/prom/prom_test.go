package prom

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/terse-dev/terse/meter"
)

// TestTallyCountsCostApart: tokens before and after add up; a negative
// part goes to the cost counter, never down the saved one; every listed
// source has its series from the first call.
func TestTallyCountsCostApart(t *testing.T) {
	x := NewTally(TallyOpts{
		Before: prometheus.CounterOpts{Name: "x_in_total", Help: "i"}, After: prometheus.CounterOpts{Name: "x_out_total", Help: "o"},
		Saved: prometheus.CounterOpts{Name: "x_saved_total", Help: "s"}, Cost: prometheus.CounterOpts{Name: "x_cost_total", Help: "c"},
		Labels: []string{"tool"}, Sources: []string{"dedup", "encoding"},
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(x.Collectors()...)
	x.Add(100, 92, meter.Saved{"encoding": 10, "dedup": -2, "other": 99}, "t")
	x.Add(50, 54, meter.Saved{"encoding": -4}, "t")
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += " " + l.GetName() + "=" + l.GetValue()
			}
			got[key] = m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		"x_in_total tool=t": 150, "x_out_total tool=t": 146,
		"x_cost_total source=dedup tool=t": 2, "x_cost_total source=encoding tool=t": 4,
		"x_saved_total source=dedup tool=t": 0, "x_saved_total source=encoding tool=t": 10,
	}
	if len(got) != len(want) {
		t.Errorf("series = %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}
