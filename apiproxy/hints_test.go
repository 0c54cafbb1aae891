package apiproxy

import (
	"strings"
	"testing"

	"github.com/terse-dev/terse/history"
)

// TestRefPolicy: a conversation's profile decides whether repeated
// results become references, and how many: the first MaxRefs repeats of
// the conversation, the same ones on every later request.
func TestRefPolicy(t *testing.T) {
	build := func(first string, reads int) []byte {
		var c convo
		c.user(first)
		for range reads {
			c.call("Read", `{"file_path":"/src/a.go"}`, fileText("a", 60))
		}
		return c.request()
	}
	refs := func(body []byte) int { return strings.Count(string(body), "> [ref: ") }
	for _, tc := range []struct {
		name string
		prof Profile
		want []int // references after 2, 3 and 5 reads
	}{
		{"default", Profile{}, []int{1, 2, 4}},
		{"off", Profile{NoRefs: true}, []int{0, 0, 0}},
		{"capped", Profile{MaxRefs: 2}, []int{1, 2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rw := NewRewriter(Options{NoTrim: true, Profile: func(string) Profile { return tc.prof }})
			var firstRef string
			for i, n := range []int{2, 3, 5} {
				res := rw.Rewrite(build("Fix a.go.", n), history.Anthropic)
				body := res.Body
				if body == nil {
					body = build("Fix a.go.", n)
				}
				if got := refs(body); got != tc.want[i] {
					t.Errorf("after %d reads: %d references, want %d", n, got, tc.want[i])
				}
				if j := strings.Index(string(body), "> [ref: "); j >= 0 {
					ref, _, _ := strings.Cut(string(body[j:]), "]")
					if firstRef == "" {
						firstRef = ref
					} else if ref != firstRef {
						t.Errorf("the first reference changed: %q, was %q", ref, firstRef)
					}
				}
			}
		})
	}
}

// TestRefPolicyByModel: two conversations of different models get their
// own profiles through the same rewriter.
func TestRefPolicyByModel(t *testing.T) {
	rw := NewRewriter(Options{NoTrim: true, Profile: func(model string) Profile {
		return Profile{NoRefs: strings.HasPrefix(model, "claude")}
	}})
	var c convo
	c.user("Fix a.go.")
	c.call("Read", `{"file_path":"/src/a.go"}`, fileText("a", 60))
	c.call("Read", `{"file_path":"/src/a.go"}`, fileText("a", 60))
	claude := c.request() // model claude-sonnet-4-5
	gpt := []byte(strings.Replace(strings.Replace(string(claude), "claude-sonnet-4-5", "gpt-5", 1), "Fix a.go.", "Fix a.go, please.", 1))
	if res := rw.Rewrite(claude, history.Anthropic); strings.Contains(string(res.Body), "> [ref: ") {
		t.Error("claude conversation got a reference")
	}
	if res := rw.Rewrite(gpt, history.Anthropic); !strings.Contains(string(res.Body), "> [ref: ") {
		t.Errorf("gpt conversation got no reference: %v", res.Skipped)
	}
}
