// Package prom renders meter's counts as Prometheus counters: the one place
// a meter.Tally's tokens and savings by source become metrics, for the
// gateway and terse api. It is apart from meter so that only the servers
// link Prometheus.
package prom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/terse-dev/terse/meter"
)

// TallyOpts name a Tally's counters. Before and After count the tokens of
// calls before and after terse; Saved counts the positive parts of their
// savings by source and Cost the negative ones (what a source added where
// it saved none), because a counter only goes up: saved minus cost is the
// net saving. Before, After, Saved and Cost are labelled by Labels, Saved
// and Cost also by "source" (one of Sources; other sources are not
// counted).
type TallyOpts struct {
	Before, After, Saved, Cost prometheus.CounterOpts
	Labels                     []string
	Sources                    []string
}

// Tally is a meter.Tally's tokens and savings as Prometheus counters.
type Tally struct {
	before, after, saved, cost *prometheus.CounterVec
	sources                    []string
}

// NewTally returns the counters o names; register Collectors.
func NewTally(o TallyOpts) *Tally {
	bySource := append(o.Labels[:len(o.Labels):len(o.Labels)], "source")
	return &Tally{
		before:  prometheus.NewCounterVec(o.Before, o.Labels),
		after:   prometheus.NewCounterVec(o.After, o.Labels),
		saved:   prometheus.NewCounterVec(o.Saved, bySource),
		cost:    prometheus.NewCounterVec(o.Cost, bySource),
		sources: o.Sources,
	}
}

// Collectors are the counters to register.
func (t *Tally) Collectors() []prometheus.Collector {
	return []prometheus.Collector{t.before, t.after, t.saved, t.cost}
}

// Init creates every series of the label values (one per source for
// the savings), at zero.
func (t *Tally) Init(values ...string) { t.Add(0, 0, nil, values...) }

// Add counts a call of before tokens sent as after, saving saved, under
// the label values; every series of the values exists after it.
func (t *Tally) Add(before, after int, saved meter.Saved, values ...string) {
	t.before.WithLabelValues(values...).Add(float64(before))
	t.after.WithLabelValues(values...).Add(float64(after))
	v := append(values[:len(values):len(values)], "")
	for _, src := range t.sources {
		v[len(v)-1] = src
		s, c := t.saved.WithLabelValues(v...), t.cost.WithLabelValues(v...)
		switch n := saved[src]; {
		case n > 0:
			s.Add(float64(n))
		case n < 0:
			c.Add(float64(-n))
		}
	}
}
