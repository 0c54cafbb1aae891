package eval

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// File reads: a source file is a Document whose Value is the file's text
// (a JSON string). The read encodings show it as a coding agent's file
// read does (Claude Code's Read: every line numbered, "     N→") and in
// each read form of package shape; the questions are the ones an edit
// depends on: the exact text of a line named by its number, and the
// number of a line named by its text.

// Question kinds of file reads.
const (
	KindLineText   = "line-text"   // the exact text of line N
	KindLineNumber = "line-number" // the number of the line holding a text
)

// Query ops of file reads; the document is the file's text.
const (
	OpLine   = "line"    // the text of line Value (a number)
	OpLineOf = "line-of" // the number of the one line whose text is Value
)

// evalLine evaluates a file read's query on text.
func (q *Query) evalLine(text string) (string, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	switch q.Op {
	case OpLine:
		n, err := strconv.Atoi(q.Value)
		if err != nil || n < 1 || n > len(lines) {
			return "", errNotFound
		}
		return lines[n-1], nil
	case OpLineOf:
		at := 0
		for i, l := range lines {
			if l == q.Value {
				if at != 0 {
					return "", errAmbiguous
				}
				at = i + 1
			}
		}
		if at == 0 {
			return "", errNotFound
		}
		return strconv.Itoa(at), nil
	}
	return "", fmt.Errorf("unknown query op %q", q.Op)
}

// ReadDocument is a file read: name and text.
func ReadDocument(name, text string) Document {
	return Document{Name: name, Value: tree.String(text)}
}

// Limits of the lines asked about.
const (
	minLineLen = 8   // characters of a line asked about, without its indentation
	maxLineLen = 160 // characters of a line asked about
)

// GenerateReads returns up to n questions about a file read, taken in
// turn from both kinds, deterministic for seed. A line is asked about
// when its text (without indentation) has at least 8 characters, it is
// valid UTF-8 without control characters, and no other line of the file
// holds the same text, so that both questions have one answer. Lines whose
// number the sparse read form shows (every 10th, the first and the last)
// are left out: they are the easy ones.
func GenerateReads(doc Document, n int, seed uint64) []Question {
	if n <= 0 || doc.Value.Kind() != tree.KindString {
		return nil
	}
	text := doc.Value.Str()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	count := map[string]int{}
	for _, l := range lines {
		count[strings.TrimSpace(l)]++
	}
	var cand []int
	for i, l := range lines {
		t := strings.TrimSpace(l)
		k := i + 1
		if k == 1 || k == len(lines) || k%10 == 0 || len(t) < minLineLen || len(l) > maxLineLen || count[t] > 1 || !utf8.ValidString(l) || strings.ContainsFunc(l, func(r rune) bool { return r < ' ' && r != '\t' }) || strings.Contains(l, "`") {
			continue
		}
		cand = append(cand, k)
	}
	h := fnv.New64a()
	h.Write([]byte(doc.Name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	rng.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
	var out []Question
	for i, k := range cand {
		if len(out) >= n {
			break
		}
		var q Question
		if i%2 == 0 {
			q = Question{Kind: KindLineText, Text: fmt.Sprintf("What is the exact text of line %d of the file (without its line number)?", k),
				Query: &Query{Op: OpLine, Value: strconv.Itoa(k)}}
		} else {
			l := lines[k-1]
			q = Question{Kind: KindLineNumber, Text: fmt.Sprintf("Which line number of the file holds exactly this text: `%s`? Reply with the number alone.", strings.TrimSpace(l)),
				Query: &Query{Op: OpLineOf, Value: l}}
		}
		ans, err := q.Query.Eval(doc.Value)
		if err != nil {
			continue
		}
		q.Answer, q.Doc = ans, doc.Name
		q.ID = fmt.Sprintf("%s#%d", doc.Name, len(out)+1)
		out = append(out, q)
	}
	return out
}

// ReadGutter is the numbered form of text as Claude Code's Read shows
// it: each line "%6d→" and its text.
func ReadGutter(text string) string {
	var sb strings.Builder
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		fmt.Fprintf(&sb, "%6d→%s\n", i+1, l)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// ReadEncodings lists the names ParseEncoding knows for file reads.
var ReadEncodings = []string{"read", "read:gutter", "read:tab", "read:sparse", "read:range"}

// ReadEncoding shows a file read in form: "" is the read as the agent
// shows it (ReadGutter), else one of shape.ReadForms, as the shaping stage
// writes it (measured by c, nil meaning o200k_base). A shaping that does
// not apply (a read too short to gain) leaves the read as it is.
func ReadEncoding(form string, c tokens.Counter) Encoding {
	name := "read"
	if form != "" {
		name += ":" + form
	}
	if c == nil {
		c = tokens.O200kBase()
	}
	return Encoding{Name: name, Lossless: true, Encode: func(_ context.Context, v tree.Value) (Encoded, error) {
		if v.Kind() != tree.KindString {
			return Encoded{}, errors.New(name + ": the document is not a file read")
		}
		text := ReadGutter(v.Str())
		if form != "" {
			r := shape.Shape(text, shape.Call{Tool: "Read"}, &shape.Options{Counter: c, Margin: -1, MinBytes: 1, ReadForm: form, Ceiling: shape.Lossless})
			text = r.Text
		}
		return Encoded{Text: text, decode: decodeRead, whole: true}, nil
	}}
}

// decodeRead reads a file read back: a shaped read expanded, then every
// line's number checked and dropped.
func decodeRead(text string) (tree.Value, error) {
	if strings.HasPrefix(text, "> [") {
		back, err := shape.Expand(text)
		if err != nil {
			return tree.Value{}, err
		}
		text = back
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		num, rest, ok := strings.Cut(strings.TrimLeft(l, " "), "→")
		if !ok || num != strconv.Itoa(i+1) {
			return tree.Value{}, fmt.Errorf("line %d is not numbered %d", i+1, i+1)
		}
		lines[i] = rest
	}
	return tree.String(strings.Join(lines, "\n")), nil
}
