package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/tokens"
)

// sourceFile is a Go-like file of n lines: unique statements, with blank
// lines and closing braces repeated as in real code.
func sourceFile(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		switch {
		case i%7 == 0:
			sb.WriteString("\n")
		case i%7 == 6:
			sb.WriteString("\t}\n")
		default:
			fmt.Fprintf(&sb, "\tif err := step%d(ctx, %d); err != nil {\n", i, i*3)
		}
	}
	return sb.String()
}

func readEncodings(t *testing.T) []Encoding {
	var encs []Encoding
	for _, name := range ReadEncodings {
		e, err := ParseEncoding(name, tokens.O200kBase())
		if err != nil {
			t.Fatal(err)
		}
		encs = append(encs, e)
	}
	return encs
}

// TestReadForms: questions about a file read (the exact text of line N,
// the number of the line holding a text) are answered right in every
// read form by the decode reader, every form is the one named (its
// header), and the forms are smaller than the read as the agent shows it.
func TestReadForms(t *testing.T) {
	doc := ReadDocument("main.go", sourceFile(240))
	qs := GenerateReads(doc, 12, 1)
	if len(qs) != 12 {
		t.Fatalf("%d questions, want 12", len(qs))
	}
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
		if n, _ := strconv.Atoi(q.Query.Value); q.Query.Op == OpLine && n%10 == 0 {
			t.Errorf("%s asks about line %d, whose number the sparse form shows", q.ID, n)
		}
	}
	if kinds[KindLineText] != 6 || kinds[KindLineNumber] != 6 {
		t.Errorf("kinds: %v", kinds)
	}
	encs := readEncodings(t)
	heads := map[string]string{"read": "     1→", "read:gutter": `"→" numbers unpadded to width 6]`, "read:tab": `"→" numbers unpadded to width 6 and followed by "\t"]`, "read:sparse": `numbered "→" on the first, the last and every 10th only`, "read:range": `follow without their "→" numbers`}
	toks := map[string]int{}
	for _, e := range encs {
		out, err := e.Encode(context.Background(), doc.Value)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.SplitN(out.Text, "\n", 2)[0], heads[e.Name]) {
			t.Errorf("%s opens with %q", e.Name, strings.SplitN(out.Text, "\n", 2)[0])
		}
		toks[e.Name] = tokens.O200kBase().Count(out.Text)
	}
	if !(toks["read"] > toks["read:gutter"] && toks["read:gutter"] > toks["read:tab"] && toks["read:tab"] > toks["read:sparse"] && toks["read:sparse"] > toks["read:range"]) {
		t.Errorf("tokens per form: %v", toks)
	}
	plan, err := Prepare(context.Background(), Config{Docs: []Document{doc}, Questions: qs, Encodings: encs, Reader: DecodeReader{}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := plan.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Encodings {
		if e.Correct != e.Questions || e.Questions != 12 {
			t.Errorf("%s: %d/%d correct", e.Name, e.Correct, e.Questions)
		}
	}
	var md strings.Builder
	rep.WriteMarkdown(&md)
	for _, k := range []string{KindLineText, KindLineNumber} {
		if !strings.Contains(md.String(), k) {
			t.Errorf("the report has no row for %s:\n%s", k, md.String())
		}
	}
}

// textReader answers a file read question from the text alone, as a
// careful model would: it numbers the lines by the gutter, by the sparse
// form's shown numbers or by the range form's header.
func textReader(doc, question string) string {
	lines := strings.Split(doc, "\n")
	var nums []int // the number of each line, 0 for none
	var texts []string
	first, sparse, ranged := 0, false, false
	if m := regexp.MustCompile(`^> \[lossless: lines (\d+)–\d+ (numbered|follow)`).FindStringSubmatch(lines[0]); m != nil {
		first, _ = strconv.Atoi(m[1])
		sparse, ranged = m[2] == "numbered", m[2] == "follow"
		lines = lines[1:]
	} else if strings.HasPrefix(lines[0], "> [") {
		lines = lines[1:]
	}
	gutter := regexp.MustCompile(`^ *(\d+)(?:→|\t)(.*)$`)
	for i, l := range lines {
		switch {
		case ranged:
			nums, texts = append(nums, first+i), append(texts, l)
		case sparse:
			if m := gutter.FindStringSubmatch(l); m != nil && (i == 0 || i == len(lines)-1 || (first+i)%10 == 0) {
				l = m[2]
			}
			nums, texts = append(nums, first+i), append(texts, l)
		default:
			m := gutter.FindStringSubmatch(l)
			if m == nil {
				return "I cannot tell"
			}
			n, _ := strconv.Atoi(m[1])
			nums, texts = append(nums, n), append(texts, m[2])
		}
	}
	if m := regexp.MustCompile(`^What is the exact text of line (\d+) `).FindStringSubmatch(question); m != nil {
		n, _ := strconv.Atoi(m[1])
		for i := range nums {
			if nums[i] == n {
				return "`" + strings.TrimSpace(texts[i]) + "`"
			}
		}
		return NotShown
	}
	if m := regexp.MustCompile("holds exactly this text: `(.*)`\\?").FindStringSubmatch(question); m != nil {
		for i := range texts {
			if strings.TrimSpace(texts[i]) == m[1] {
				return strconv.Itoa(nums[i])
			}
		}
	}
	return NotShown
}

// TestReadFormsModel runs the read questions through the HTTP reader
// against a local OpenAI-compatible endpoint whose "model" reads each
// form by its text alone (textReader): every form scores 100 %, and the
// report compares each with the read as the agent shows it.
func TestReadFormsModel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		prompt := req.Messages[len(req.Messages)-1].Content
		doc, question, _ := strings.Cut(strings.TrimPrefix(prompt, "Document:\n\n"), "\n\nQuestion: ")
		json.NewEncoder(w).Encode(map[string]any{
			"choices": []map[string]any{{"message": map[string]string{"role": "assistant", "content": textReader(doc, question)}}},
			"usage":   map[string]int{"prompt_tokens": len(prompt) / 4, "completion_tokens": 3},
		})
	}))
	defer srv.Close()
	doc := ReadDocument("main.go", sourceFile(240))
	qs := GenerateReads(doc, 10, 2)
	h := &HTTPReader{API: APIOpenAI, BaseURL: srv.URL, Model: "reader", CacheDir: t.TempDir()}
	plan, err := Prepare(context.Background(), Config{Docs: []Document{doc}, Questions: qs, Encodings: readEncodings(t), Reader: h, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := plan.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Encodings) != len(ReadEncodings) {
		t.Fatalf("%d encodings in the report", len(rep.Encodings))
	}
	for _, e := range rep.Encodings {
		if e.Correct != e.Questions || e.Errors != 0 {
			t.Errorf("%s: %d/%d correct, %d errors", e.Name, e.Correct, e.Questions, e.Errors)
		}
	}
}

// FuzzGenerateReads: questions about any text are answered by their own
// queries on it, and every read form decodes back to the text.
func FuzzGenerateReads(f *testing.F) {
	f.Add(sourceFile(40))
	f.Add("a\r\nb\r\n\xff\xfe line\n\n\n")
	f.Add("     1→x\n> [lossless: repeats folded]\n[… same line 3 more times …]\n")
	encs := []Encoding{ReadEncoding("", tokens.Estimate())}
	for _, form := range shape.ReadForms {
		encs = append(encs, ReadEncoding(form, tokens.Estimate()))
	}
	f.Fuzz(func(t *testing.T, text string) {
		doc := ReadDocument("f", text)
		for _, q := range GenerateReads(doc, 6, 1) {
			if got, err := q.Query.Eval(doc.Value); err != nil || got != q.Answer {
				t.Fatalf("%s: %q, %v; want %q", q.Text, got, err, q.Answer)
			}
		}
		want := strings.TrimSuffix(text, "\n")
		for _, e := range encs {
			out, err := e.Encode(context.Background(), doc.Value)
			if err != nil {
				t.Fatal(err)
			}
			v, err := out.decode(out.Text)
			if err != nil || v.Str() != want {
				t.Fatalf("%s: decodes to %q (%v), want %q\n%s", e.Name, v.Str(), err, want, out.Text)
			}
		}
	})
}
