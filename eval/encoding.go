package eval

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// An Encoding turns a document into the text a model reads.
type Encoding struct {
	// Name labels the encoding in prompts' caches and in reports.
	Name string
	// Lossless says the text always decodes to the document: the decode
	// reader must then score 100 %.
	Lossless bool
	// Encode returns the text for v.
	Encode func(ctx context.Context, v tree.Value) (Encoded, error)
}

// Encoded is one document's text in one encoding.
type Encoded struct {
	Text string
	// Partial is set when the encoding left something out or shortened
	// it (a fitted result). Shown is then what the text holds, decoded;
	// questions about anything else expect [NotShown].
	Partial bool
	Shown   tree.Value

	// decode reads Text back; nil means any of render's forms.
	decode func(string) (tree.Value, error)
	// whole: decode reads the whole text (it holds no in-band notes
	// after a document).
	whole bool
}

// JSONEncoding is compact JSON.
func JSONEncoding() Encoding {
	return Encoding{Name: "json", Lossless: true, Encode: func(_ context.Context, v tree.Value) (Encoded, error) {
		return Encoded{Text: encodeJSON(v)}, nil
	}}
}

// RenderEncoding is "toon" or "auto" as terse encode writes it, measured by
// c (nil means o200k_base).
func RenderEncoding(name string, c tokens.Counter) Encoding {
	if c == nil {
		c = tokens.O200kBase()
	}
	return Encoding{Name: name, Lossless: true, Encode: func(_ context.Context, v tree.Value) (Encoded, error) {
		if name == "toon" {
			return Encoded{Text: string(toon.Marshal(v)), decode: decodeTOON}, nil
		}
		t, err := encodeRender(v, name, c)
		return Encoded{Text: t}, err
	}}
}

// CompactEncoding is the result fitted under a token budget, as
// "terse compact --to FORMAT" writes it; format is auto (also when empty),
// json or toon. budget > 0 is a fixed budget in tokens of c; budget <= 0
// means half the document's compact JSON tokens (at least 200), so that
// every larger document is trimmed.
func CompactEncoding(name string, budget int, format string, c tokens.Counter) Encoding {
	if c == nil {
		c = tokens.O200kBase()
	}
	if format == "" {
		format = "auto"
	}
	return Encoding{Name: name, Encode: func(ctx context.Context, v tree.Value) (Encoded, error) {
		b := budget
		if b <= 0 {
			b = max(c.Count(encodeJSON(v))/2, 200)
		}
		text, truncated, err := encodeCompact(ctx, v, b, format, c)
		if err != nil {
			return Encoded{}, err
		}
		e := Encoded{Text: text}
		if format == "toon" {
			e.decode = decodeTOON
		}
		if truncated {
			shown, _, err := decodeText(text, e.decode)
			if err != nil {
				return Encoded{}, fmt.Errorf("%s: fitted text does not decode: %w", name, err)
			}
			e.Partial, e.Shown = true, shown
		}
		return e, nil
	}}
}

// CommandEncoding runs a shell command with the document as compact JSON on
// its standard input; its standard output is the text.
func CommandEncoding(name, command string) Encoding {
	return Encoding{Name: name, Encode: func(ctx context.Context, v tree.Value) (Encoded, error) {
		shell, flag := "sh", "-c"
		if runtime.GOOS == "windows" {
			shell, flag = "cmd", "/c"
		}
		cmd := exec.CommandContext(ctx, shell, flag, command)
		cmd.Stdin = strings.NewReader(encodeJSON(v))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(errb.String())
			if len(msg) > 200 {
				msg = msg[:200]
			}
			return Encoded{}, fmt.Errorf("encoding %s: %v: %s", name, err, msg)
		}
		return Encoded{Text: out.String()}, nil
	}}
}

// BuiltinEncodings lists the names ParseEncoding knows.
var BuiltinEncodings = []string{"json", "toon", "auto", "compact[:BUDGET][@json|@toon|@auto]", "read[:gutter|:tab|:sparse|:range]"}

// ParseEncoding returns the encoding called spec: json, toon, auto,
// compact[:BUDGET][@FORMAT] (compact:2000@json: fitted under 2,000 tokens,
// as compact JSON), or NAME=COMMAND for an external command.
func ParseEncoding(spec string, c tokens.Counter) (Encoding, error) {
	if name, cmd, ok := strings.Cut(spec, "="); ok {
		name = strings.TrimSpace(name)
		if name == "" || strings.TrimSpace(cmd) == "" {
			return Encoding{}, fmt.Errorf("encoding %q: want NAME=COMMAND", spec)
		}
		return CommandEncoding(name, cmd), nil
	}
	if form, ok := strings.CutPrefix(spec, "read"); ok && (form == "" || form[0] == ':') {
		form = strings.TrimPrefix(form, ":")
		if form != "" && !slices.Contains(shape.ReadForms, form) {
			return Encoding{}, fmt.Errorf("encoding %q: the read form must be one of %s", spec, strings.Join(shape.ReadForms, ", "))
		}
		return ReadEncoding(form, c), nil
	}
	switch spec {
	case "json":
		return JSONEncoding(), nil
	case "toon", "auto":
		return RenderEncoding(spec, c), nil
	}
	if rest, ok := strings.CutPrefix(spec, "compact"); ok {
		rest, format, _ := strings.Cut(rest, "@")
		switch format {
		case "", "auto", "json", "toon":
		default:
			return Encoding{}, fmt.Errorf("encoding %q: format must be json, toon or auto", spec)
		}
		budget := 0
		if rest != "" {
			b, ok := strings.CutPrefix(rest, ":")
			n, err := strconv.Atoi(b)
			if !ok || err != nil || n <= 0 {
				return Encoding{}, fmt.Errorf("encoding %q: budget must be a positive number of tokens", spec)
			}
			budget = n
		}
		return CompactEncoding(spec, budget, format, c), nil
	}
	return Encoding{}, fmt.Errorf("unknown encoding %q (want one of %s, or NAME=COMMAND)", spec, strings.Join(BuiltinEncodings, ", "))
}

// Expected returns the gold answer of q for a document shown as e, and
// other answers also accepted. For a complete text that is q.Answer. For a
// partial one, a question is answered as before when evaluating it on what
// the text shows gives the same answer; otherwise the gold is [NotShown].
// Counts and first/last questions over a trimmed list expect NotShown and
// also accept the true answer.
func Expected(q *Question, e *Encoded) (gold string, also []string) {
	if !e.Partial || q.Query == nil {
		return q.Answer, nil
	}
	if q.Query.positional() {
		return NotShown, []string{q.Answer}
	}
	got, err := q.Query.Eval(e.Shown)
	if err != nil || got != q.Answer {
		return NotShown, nil
	}
	if q.Query.Op == OpPresence && got == PresenceAbsent {
		// A field dropped by fitting looks absent too.
		return NotShown, []string{PresenceAbsent}
	}
	return q.Answer, nil
}
