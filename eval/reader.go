package eval

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/terse-dev/terse/tree"
)

// SystemPrompt is what every model reader is told before the document.
// Its wording is part of what is measured: changing it changes results.
const SystemPrompt = "You answer questions about a document. Use only the document. " +
	"Reply with the answer alone: no explanation, no quotes, no units. " +
	"Give numbers exactly as written and URLs in full. " +
	"If the document does not show the answer (for example because the item was left out), reply exactly: " + NotShown

// A Request is one question about one encoded document.
type Request struct {
	System string // SystemPrompt
	// Prompt is the user message: Context (the document's text) then
	// the question. Requests about the same document in the same
	// encoding share Context, a prefix providers can cache.
	Prompt   string
	Context  string
	Question *Question
	Encoding string
	Encoded  *Encoded
}

// NewRequest builds the request for q about a document encoded as e.
func NewRequest(q *Question, encoding string, e *Encoded) *Request {
	ctx := "Document:\n\n" + e.Text + "\n\n"
	return &Request{
		System:   SystemPrompt,
		Prompt:   ctx + "Question: " + q.Text,
		Context:  ctx,
		Question: q,
		Encoding: encoding,
		Encoded:  e,
	}
}

// A Reply is a reader's answer.
type Reply struct {
	Text         string
	InputTokens  int  // as the provider reports them (0 when unknown)
	OutputTokens int  //
	Cached       bool // served from the response cache
}

// A Reader answers questions.
type Reader interface {
	// Name describes the reader and its model, for reports.
	Name() string
	Answer(ctx context.Context, r *Request) (Reply, error)
}

// ErrNoQuery is returned by the decode reader for a hand-written question.
var ErrNoQuery = errors.New("decode reader: the question has no query (hand-written)")

// DecodeReader answers by decoding the text (any terse encoding, or the
// part before a fitted result's in-band notes) and evaluating the
// question's query on it. On a lossless encoding it must score 100 %; on a
// fitted one it answers [NotShown] for what the text leaves out: an item or
// field that is not there, a string cut with "…[+N chars]", and counts or
// first/last items of a trimmed list.
//
// It writes its answers as a model might (strings in quotes, "Answer: "
// before a count) so that grading is exercised too.
type DecodeReader struct{}

// Name implements Reader.
func (DecodeReader) Name() string { return "decode" }

// Answer implements Reader.
func (DecodeReader) Answer(_ context.Context, r *Request) (Reply, error) {
	q := r.Question
	if q.Query == nil {
		return Reply{}, ErrNoQuery
	}
	var v tree.Value
	var partial bool
	var err error
	if r.Encoded.whole {
		v, err = r.Encoded.decode(r.Encoded.Text)
	} else {
		v, partial, err = decodeText(r.Encoded.Text, r.Encoded.decode)
	}
	if err != nil {
		return Reply{}, fmt.Errorf("decode reader: %w", err)
	}
	if partial && q.Query.positional() {
		return Reply{Text: NotShown}, nil
	}
	ans, err := q.Query.Eval(v)
	switch {
	case err != nil, partial && q.Query.Op == OpPresence && ans == PresenceAbsent, shortened(ans):
		return Reply{Text: NotShown}, nil
	case q.Query.Op == OpCount:
		return Reply{Text: "Answer: " + ans}, nil
	case q.Query.Op == OpLine:
		return Reply{Text: "`" + strings.TrimSpace(ans) + "`"}, nil
	case q.Query.Op == OpGet:
		if _, isNum := number(ans); !isNum && ans != "true" && ans != "false" && ans != "null" {
			return Reply{Text: `"` + ans + `"`}, nil
		}
	}
	return Reply{Text: ans}, nil
}
