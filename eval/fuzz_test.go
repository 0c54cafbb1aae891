package eval

import (
	"strings"
	"testing"
	"time"

	"github.com/terse-dev/terse/tree"
)

func FuzzParseQuestions(f *testing.F) {
	f.Add(`{"document": "issues.json", "question": "Who opened issue 7?", "answer": "octocat"}`)
	f.Add(`{"document": {"a": [1, 2]}, "question": "How many?", "answer": 2, "kind": "count"}` + "\n# comment\n\n" + `{"document": [1], "question": "q", "answer": null}`)
	f.Add(`{"document": "", "question": "q", "answer": "a"}`)
	f.Add(`{"document": "x", "question": "q", "answer": "a", "extra": 1}`)
	f.Add(`{"document": "x", "question": "q"} {}`)
	f.Fuzz(func(t *testing.T, s string) {
		qs, docs, err := ParseQuestions(strings.NewReader(s), "f.jsonl")
		if err != nil {
			if _, ok := err.(*QuestionFileError); !ok {
				t.Fatalf("error %T %v is not a *QuestionFileError", err, err)
			}
			if qs != nil || docs != nil {
				t.Fatal("questions returned with an error")
			}
			return
		}
		for _, q := range qs {
			if q.Text == "" || q.Doc == "" || q.ID == "" || q.Kind == "" || q.Query != nil {
				t.Fatalf("bad question %+v", q)
			}
			Grade(q.Answer, q.Answer) // never panics
		}
		for _, d := range docs {
			if k := d.Value.Kind(); k != tree.KindObject && k != tree.KindArray {
				t.Fatalf("inline document of kind %v", k)
			}
		}
	})
}

// FuzzGrade checks the reply parser: normalising is idempotent on its
// own output's grading, a reply always matches itself, and nothing panics.
func FuzzGrade(f *testing.F) {
	for _, s := range []string{"42", "Answer: 1,234.", "```\nnull\n```", `""`, "Not shown.", "**open**", "<https://x/>", "1e99999", "-", "'", "1.50e3"} {
		f.Add(s, "42")
	}
	f.Fuzz(func(t *testing.T, reply, gold string) {
		if !Grade(reply, reply) {
			t.Fatalf("Grade(%q, itself) = false (normalized %q)", reply, Normalize(reply))
		}
		Grade(reply, gold, NotShown)
		n := Normalize(reply)
		if strings.Contains(n, "\n") {
			t.Fatalf("Normalize(%q) = %q has a newline", reply, n)
		}
	})
}

func FuzzParseResponse(f *testing.F) {
	f.Add(`{"content":[{"type":"text","text":"42"}],"usage":{"input_tokens":10,"output_tokens":1}}`)
	f.Add(`{"choices":[{"message":{"role":"assistant","content":"42"}}],"usage":{"prompt_tokens":3}}`)
	f.Add(`{"choices":[{"message":{"content":null}}]}`)
	f.Add(`{"content":[{"type":"tool_use"}]}`)
	f.Add(`{"id":"x","content":`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, api := range []string{APIAnthropic, APIOpenAI} {
			rep, err := parseResponse(api, []byte(body))
			if err != nil {
				if _, ok := err.(*MalformedError); !ok {
					t.Fatalf("%s: error %T is not a *MalformedError", api, err)
				}
				if rep != (Reply{}) {
					t.Fatalf("%s: reply with an error", api)
				}
				continue
			}
			Grade(rep.Text, "42")
		}
	})
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "3", "-1", "Mon, 23 Nov 2026 12:01:30 GMT", "99999999999999999999", "soon"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if d := retryAfter(s, now); d < 0 || d > 10*time.Minute {
			t.Fatalf("retryAfter(%q) = %v, want within [0, 10m]", s, d)
		}
	})
}
