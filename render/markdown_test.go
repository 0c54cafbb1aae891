package render_test

import (
	"os"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/render"
)

// TestCorpusMarkdown: every corpus text file with a Markdown table comes
// back from csv_from_md with the same tables and the same text around them.
func TestCorpusMarkdown(t *testing.T) {
	c := counter(t)
	var in, out, n int
	for _, path := range corpus.Files(t, ".md", ".txt") {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		enc, ok := render.EncodeMarkdown(text)
		if !ok {
			continue
		}
		n++
		back, err := render.DecodeMarkdown(enc)
		if err != nil {
			t.Errorf("%s: DecodeMarkdown: %v", corpus.Name(path), err)
			continue
		}
		if !render.EqualMarkdown(back, text) {
			t.Errorf("%s: decoded Markdown differs from the original", corpus.Name(path))
		}
		ni, no := c.Count(text), c.Count(enc)
		in += ni
		out += min(ni, no)
	}
	if n == 0 {
		t.Skip("no Markdown tables in the corpus")
	}
	t.Logf("%d files with tables: %d → %d %s tokens (%.1f%% saved)", n, in, out, c.Name(), 100*(1-float64(out)/float64(in)))
}

func TestMarkdownRoundTrip(t *testing.T) {
	text := "Intro | not a table\n\n| A | B | C |\n|:--|:-:|--:|\n| 1 | x, y | \"q\" |\n| `code \\| pipe` |  | 3 |\n| short |\nafter\n```\n| a | b |\n|---|---|\n```\n"
	enc, ok := render.EncodeMarkdown(text)
	if !ok {
		t.Fatal("EncodeMarkdown found no table")
	}
	want := "Intro | not a table\n\n```csv align=lcr\nA,B,C\n1,\"x, y\",\"\"\"q\"\"\"\n\"`code \\| pipe`\",,3\nshort\n```\nafter\n```\n| a | b |\n|---|---|\n```\n"
	if enc != want {
		t.Errorf("EncodeMarkdown =\n%s\nwant\n%s", enc, want)
	}
	back, err := render.DecodeMarkdown(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !render.EqualMarkdown(back, text) {
		t.Errorf("DecodeMarkdown =\n%s\nnot equal to the original", back)
	}
	if _, ok := render.EncodeMarkdown("```csv\na,b\n```\n| a |\n|---|\n"); ok {
		t.Error("EncodeMarkdown rewrote text that already holds a ```csv block")
	}
	if render.EqualMarkdown("| a |\n|---|\n| 1 |", "| a |\n|---|\n| 2 |") {
		t.Error("EqualMarkdown ignores a cell change")
	}
	if !strings.Contains(render.DetectText(text).String(), "markdown") {
		t.Errorf("DetectText = %s, want markdown_table", render.DetectText(text))
	}
}
