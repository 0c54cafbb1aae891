package prom

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/terse-dev/terse/meter"
)

// TestSavedCountsCostApart: a negative part goes to the cost counter,
// never down the saved one, and every listed source has its series from
// the start.
func TestSavedCountsCostApart(t *testing.T) {
	s := NewSaved(prometheus.CounterOpts{Name: "x_saved_total", Help: "s"}, prometheus.CounterOpts{Name: "x_cost_total", Help: "c"},
		[]string{"tool"}, []string{"dedup", "encoding"})
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.Collectors()...)
	s.Init("t")
	s.Add(meter.Saved{"encoding": 10, "dedup": -2, "other": 99}, "t")
	s.Add(meter.Saved{"encoding": -4}, "t")
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
