package terse

import (
	"context"
	"testing"

	"github.com/terse-dev/terse/internal/fixture"
)

// capLater allows "more" once and then refuses it, as a session's
// counter does when another call took the last one meanwhile.
type capLater struct{ asked int }

func (c *capLater) Allow(f string) bool { return true }
func (c *capLater) Take(f string) bool {
	if f == "more" {
		c.asked++
		return false
	}
	return true
}

// TestHintRefusedAfterFit: a "more" refused once the result was fitted
// gives the whole result, not an elision without its notice.
func TestHintRefusedAfterFit(t *testing.T) {
	big := fixture.Items(200, "big")
	p, err := New(&Options{Format: "json", Budget: 300})
	if err != nil {
		t.Fatal(err)
	}
	h := &capLater{}
	r, err := p.Process(context.Background(), big, &Request{Hints: h})
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != string(big) || r.Report.Truncated || r.Report.Budget != 0 || h.asked != 1 {
		t.Errorf("truncated %v, budget %d, asked %d, %d bytes of %d", r.Report.Truncated, r.Report.Budget, h.asked, len(r.Text), len(big))
	}
}
