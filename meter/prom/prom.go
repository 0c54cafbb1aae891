// Package prom renders meter's counts as Prometheus metrics: the one place
// a saving by source becomes counters. It is apart from meter so that only
// the servers (the gateway, terse api) link Prometheus.
package prom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/terse-dev/terse/meter"
)

// Saved counts tokens saved by source in two counter vectors, labelled
// by the holder's labels and then "source": the positive parts in the
// saved counter, the negative ones (what a source cost where it saved
// none) in the cost counter, because a counter only goes up. Saved minus
// cost is the net saving. Every series of a listed source exists from the
// start, at zero, for the label values given to Init.
type Saved struct {
	saved, cost *prometheus.CounterVec
	sources     []string
}

// NewSaved returns the counters of sources (others are not counted)
// under saved and cost, labelled by labels and "source". A zero cost
// name counts no costs (the parts below zero are left out).
func NewSaved(saved, cost prometheus.CounterOpts, labels, sources []string) *Saved {
	l := append(labels[:len(labels):len(labels)], "source")
	s := &Saved{saved: prometheus.NewCounterVec(saved, l), sources: sources}
	if cost.Name != "" {
		s.cost = prometheus.NewCounterVec(cost, l)
	}
	return s
}

// Collectors are the vectors to register.
func (s *Saved) Collectors() []prometheus.Collector {
	if s.cost == nil {
		return []prometheus.Collector{s.saved}
	}
	return []prometheus.Collector{s.saved, s.cost}
}

// Init creates the series of every source for the label values, at zero.
func (s *Saved) Init(values ...string) {
	for _, src := range s.sources {
		v := append(values[:len(values):len(values)], src)
		s.saved.WithLabelValues(v...)
		if s.cost != nil {
			s.cost.WithLabelValues(v...)
		}
	}
}

// Add counts by under the label values.
func (s *Saved) Add(by meter.Saved, values ...string) {
	for _, src := range s.sources {
		n := by[src]
		if n == 0 {
			continue
		}
		v := append(values[:len(values):len(values)], src)
		switch {
		case n > 0:
			s.saved.WithLabelValues(v...).Add(float64(n))
		case s.cost != nil:
			s.cost.WithLabelValues(v...).Add(float64(-n))
		}
	}
}
