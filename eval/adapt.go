package eval

// This file is the only one that calls terse's encoders (render, the root
// pipeline): keep their use here so that a change of their API touches one
// file.

import (
	"context"
	"strings"

	terse "github.com/terse-dev/terse"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// encodeJSON is compact JSON, the baseline.
func encodeJSON(v tree.Value) string {
	return string(tree.AppendJSON(nil, v))
}

// encodeRender encodes with render (auto), verified by decoding.
func encodeRender(v tree.Value, format string, c tokens.Counter) (string, error) {
	text, _, err := render.Encode(v, &render.Options{Format: render.Format(format), Counter: c})
	return text, err
}

// encodeCompact runs the root pipeline with format (json, toon or auto)
// under budget tokens of c, as "terse compact --to FORMAT" does, and
// reports whether anything was left out or shortened.
func encodeCompact(ctx context.Context, v tree.Value, budget int, format string, c tokens.Counter) (string, bool, error) {
	p, err := terse.New(&terse.Options{Budget: budget, Format: format, Tokenizer: c})
	if err != nil {
		return "", false, err
	}
	res, err := p.ProcessValue(ctx, v, nil)
	if err != nil {
		return "", false, err
	}
	return res.Text, res.Report.Truncated, nil
}

// decodeAny decodes what render writes: an auto document, fenced TOON or
// JSON.
func decodeAny(text string) (tree.Value, error) { return render.Decode(text) }

// decodeTOON decodes bare TOON, as a fitted result in the toon format is
// written.
func decodeTOON(text string) (tree.Value, error) { return toon.Unmarshal([]byte(text), nil) }

// decodeText decodes text with dec (nil means decodeAny). When the whole
// text does not decode but the part before its in-band notes does (a fitted
// result: the document, then "> [...]" hints and a chunk index), that part
// is returned with partial set.
func decodeText(text string, dec func(string) (tree.Value, error)) (v tree.Value, partial bool, err error) {
	if dec == nil {
		dec = decodeAny
	}
	// The in-band notes of a fitted result start on a line of their own
	// after the document. They are cut off first: a note such as
	// "> [detail /items: …]" also reads as a TOON key and value, so
	// decoding the whole text could succeed and hide that it was trimmed.
	off := 0
	for _, l := range strings.SplitAfter(text, "\n") {
		if off > 0 && (inband.IsNote(l) || inband.IsGap(l)) {
			if v, err := dec(strings.TrimSuffix(text[:off], "\n")); err == nil {
				return v, true, nil
			}
		}
		off += len(l)
	}
	v, err = dec(text)
	if err != nil {
		return tree.Value{}, false, err
	}
	return v, false, nil
}

// shortened reports whether a string answer was cut by fitting: it ends
// with "…[+N chars]".
func shortened(s string) bool { return inband.IsCut(s) }
