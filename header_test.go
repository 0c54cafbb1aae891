package terse

import "testing"

func TestHeaderGet(t *testing.T) {
	h := Header{"X-Total": {"120", "7"}, "link": {"<next>"}, "x-page": {"2"}, "X-PAGE": {"3"}, "X-Empty": {}}
	for _, c := range []struct{ name, want string }{
		{"X-Total", "120"}, // exact, first value
		{"x-total", "120"}, // any case
		{"Link", "<next>"}, // stored in lower case
		{"X-Page", "3"},    // two spellings: the least ("X-PAGE") counts
		{"X-Empty", ""},    // no values
		{"X-Missing", ""},
	} {
		for range 20 { // map order must not matter
			if got := h.Get(c.name); got != c.want {
				t.Fatalf("Get(%q) = %q, want %q", c.name, got, c.want)
			}
		}
	}
}
