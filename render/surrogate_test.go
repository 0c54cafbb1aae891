package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// surrogateList is a corpus-like page of issues in which some titles and
// bodies were cut inside an emoji by a JavaScript server ("\ud83d").
func surrogateList() string {
	var b strings.Builder
	b.WriteString(`{"total":40,"items":[`)
	for i := range 40 {
		if i > 0 {
			b.WriteByte(',')
		}
		title := fmt.Sprintf("Fix flaky test %d in the scheduler", i)
		body := fmt.Sprintf("The run %d fails about once in ten. See logs.", i)
		switch i % 4 {
		case 1:
			title += ` \ud83d`
		case 2:
			body = `cut emoji \ud83d and a whole one \ud83d\ude00 \\ back`
		case 3:
			title = `\udc00 low first`
		}
		fmt.Fprintf(&b, `{"id":%d,"number":%d,"state":"open","title":"%s","body":"%s","labels":["bug","ci"],"user":{"login":"dev%d","id":%d}}`,
			1000+i, i+1, title, body, i%5, 50+i%5)
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestAutoLoneSurrogates: a result holding lone surrogate escapes keeps
// the auto encoding's saving (no fallback to compact JSON) and decodes to
// the identical tree, the escapes byte for byte.
func TestAutoLoneSurrogates(t *testing.T) {
	src := surrogateList()
	v, err := tree.ParseString(src)
	if err != nil {
		t.Fatal(err)
	}
	c := tokens.O200kBase()
	text, formats, err := Encode(v, &Options{Counter: c})
	if err != nil {
		t.Fatal(err)
	}
	if formats[0] == JSON {
		t.Fatalf("auto fell back to compact JSON:\n%s", text)
	}
	if n, j := c.Count(text), c.Count(src); n >= j*9/10 {
		t.Errorf("auto %d tokens, compact JSON %d: want a saving of at least 10%%", n, j)
	}
	got, err := Decode(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !tree.Equal(got, v) {
		t.Fatalf("round trip differs:\n%s", text)
	}
	// Compact JSON of the decoded tree is the source's, lone escapes byte
	// for byte (the one pair, \ud83d\ude00, is written as the emoji).
	want := strings.ReplaceAll(src, `\ud83d\ude00`, "😀")
	if js := string(tree.AppendJSON(nil, got)); js != want {
		t.Fatalf("JSON of the decoded tree differs from the source:\n%s\n%s", js, want)
	}
	if !strings.Contains(text, `\ud83d`) {
		t.Errorf("the escape is not in the text:\n%s", text)
	}
}

// TestAutoLoneSurrogateForms: escaped strings in every form the auto
// document has (cells, key: value lines, inline JSON, legends, documents
// with URL prefixes, multi-line strings) decode to the identical tree, and
// are told apart from a plain string with the same text (a literal
// backslash followed by "ud83d").
func TestAutoLoneSurrogateForms(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"repo":{"url":"https://example.com/org/repo/x","note":"~start \ud83d"},"rows":[`)
	for i := range 12 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"url":"https://example.com/org/repo/issues/%d","t":"%s","tags":[["a \ud83d","b"],{"k":"\\ud83d"}],"long":"line one of a long text \udbff\nline two of it, which goes on and on for a while to be long enough"}`,
			i, []string{`\ud83d`, `\\ud83d`, `~\udfff~`, `plain`}[i%4])
	}
	b.WriteString(`]}`)
	src := b.String()
	v, err := tree.ParseString(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []*Options{{Counter: tokens.O200kBase()}, {Counter: tokens.O200kBase(), Unmarked: true}, {}} {
		text, err := func() (string, error) {
			text, _, err := AutoDocument(v, o)
			return text, err
		}()
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		if testing.Verbose() {
			t.Log(text)
		}
		got, err := Decode(text)
		if err != nil || !tree.Equal(got, v) {
			t.Fatalf("round trip: %v\n%s", err, text)
		}
	}
}
