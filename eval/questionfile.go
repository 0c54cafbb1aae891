package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/terse-dev/terse/tree"
)

// QuestionFileError reports a bad line of a question file.
type QuestionFileError struct {
	Name string // file name
	Line int    // 1-based
	Msg  string
}

func (e *QuestionFileError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg)
}

// ParseQuestions reads hand-written questions, one JSON object a line:
//
//	{"document": "issues.json", "question": "Who opened issue 7?", "answer": "octocat"}
//
// "document" is a file name (returned as the question's Doc, for the caller
// to resolve) or the document itself as a JSON object or array (returned in
// docs, named NAME:LINE). "kind" is optional (default "manual"). Blank lines
// and lines starting with "#" or "//" are skipped. Unknown members are an
// error, so a typo does not silently drop a field.
func ParseQuestions(r io.Reader, name string) (qs []Question, docs []Document, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' || bytes.HasPrefix(text, []byte("//")) {
			continue
		}
		bad := func(format string, a ...any) error {
			return &QuestionFileError{Name: name, Line: line, Msg: fmt.Sprintf(format, a...)}
		}
		var raw struct {
			Document json.RawMessage `json:"document"`
			Question *string         `json:"question"`
			Answer   json.RawMessage `json:"answer"`
			Kind     string          `json:"kind"`
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, bad("%v", err)
		}
		if dec.More() {
			return nil, nil, bad("more than one JSON value on the line")
		}
		if raw.Question == nil || strings.TrimSpace(*raw.Question) == "" {
			return nil, nil, bad(`missing "question"`)
		}
		if len(raw.Answer) == 0 {
			return nil, nil, bad(`missing "answer"`)
		}
		// The answer may be written as a JSON string, number, boolean or
		// null; its answer text is what Eval would give.
		ans, err := tree.Parse(raw.Answer)
		if err != nil || !ans.IsPrimitive() {
			return nil, nil, bad(`"answer" must be a string, number, boolean or null`)
		}
		q := Question{Kind: raw.Kind, Text: strings.TrimSpace(*raw.Question), Answer: scalarText(ans)}
		if q.Kind == "" {
			q.Kind = KindManual
		}
		if q.Kind != KindManual {
			known := false
			for _, k := range Kinds {
				known = known || k == q.Kind
			}
			if !known {
				return nil, nil, bad("unknown kind %q", q.Kind)
			}
		}
		if len(raw.Document) == 0 {
			return nil, nil, bad(`missing "document"`)
		}
		dv, err := tree.Parse(raw.Document)
		if err != nil {
			return nil, nil, bad(`"document": %v`, err)
		}
		switch dv.Kind() {
		case tree.KindString:
			if dv.Str() == "" {
				return nil, nil, bad(`"document" is empty`)
			}
			q.Doc = dv.Str()
		case tree.KindObject, tree.KindArray:
			q.Doc = fmt.Sprintf("%s:%d", name, line)
			docs = append(docs, Document{Name: q.Doc, Value: dv})
		default:
			return nil, nil, bad(`"document" must be a file name or a JSON object or array`)
		}
		q.ID = fmt.Sprintf("%s:%d", name, line)
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, &QuestionFileError{Name: name, Line: line + 1, Msg: err.Error()}
	}
	return qs, docs, nil
}
