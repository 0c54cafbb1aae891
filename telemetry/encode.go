package telemetry

import (
	"strconv"
	"unicode/utf8"
)

// encode appends e as one JSON line. Keys with zero values are left out.
func (d *DirSink) encode(b []byte, e *Event) []byte {
	b = d.appendWho(b, e)
	b = appendShape(b, e)
	b = appendStr(b, "tok", vocab(e.Tokenizer, tokenizers))
	b = appendStr(b, "fmt", vocab(e.Format, formats))
	b = appendInt(b, "b_in", e.BytesIn)
	b = appendInt(b, "b_out", e.BytesOut)
	b = appendInt(b, "t_in", e.TokensIn)
	b = appendInt(b, "t_out", e.TokensOut)
	b = appendSaved(b, e)
	b = appendHints(b, e)
	b = d.appendOutcome(b, e)
	return append(b, "}\n"...)
}

// appendWho opens the line: version, time, session, partition, entry,
// class and tool (named or hashed).
func (d *DirSink) appendWho(b []byte, e *Event) []byte {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, Version, 10)
	b = append(b, `,"ms":`...)
	b = strconv.AppendInt(b, e.Time.UnixMilli(), 10)
	b = appendStr(b, "sid", d.Hash("s", e.Session))
	b = appendInt(b, "part", e.Partition)
	if e.Sidechain {
		b = append(b, `,"side":true`...)
	}
	b = appendStr(b, "entry", vocab(e.Entry, entries))
	class := e.Class
	if class != "" {
		class = vocab(class, Classes)
	} else if e.Tool != "" {
		class = ClassOf(e.Tool)
	}
	b = appendStr(b, "class", class)
	if e.Tool != "" {
		if d.o.ToolNames {
			b = appendStr(b, "tool", e.Tool)
		} else {
			b = appendStr(b, "tool", d.Hash("t", e.Tool))
		}
	}
	return b
}

// appendShape appends the input's shape, inner formats, depth and
// columns, and the text shaping and its class.
func appendShape(b []byte, e *Event) []byte {
	if e.Shape != ShapeUnknown {
		b = appendStr(b, "shape", e.Shape.String())
	}
	if e.Inner != 0 {
		b = append(b, `,"inner":[`...)
		for i, n := range e.Inner.Names() {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendQuote(b, n)
		}
		b = append(b, ']')
	}
	b = appendInt(b, "depth", int(e.Depth))
	b = appendInt(b, "cols", int(e.Cols))
	b = appendStr(b, "tshape", vocab(e.TextShape, TextShapes))
	b = appendStr(b, "tclass", vocab(e.ShapeClass, ShapeClasses))
	return b
}

// appendSaved appends the savings by source, the zero ones left out.
func appendSaved(b []byte, e *Event) []byte {
	if e.Saved != [NumSources]int{} {
		b = append(b, `,"saved":{`...)
		first := true
		for i, v := range e.Saved {
			if v == 0 {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = strconv.AppendQuote(b, SourceNames[i])
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(v), 10)
		}
		b = append(b, '}')
	}
	return b
}

// appendHints appends the hints emitted by family, the zero ones left
// out.
func appendHints(b []byte, e *Event) []byte {
	if e.Hints != [NumHints]uint16{} {
		b = append(b, `,"hints":{`...)
		first := true
		for i, v := range e.Hints {
			if v == 0 {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = strconv.AppendQuote(b, HintNames[i])
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(v), 10)
		}
		b = append(b, '}')
	}
	return b
}

// appendOutcome appends dedup, fingerprint, chunk fetch, brake,
// compactions, latency, error, why it was left untouched, and the
// sample rate.
func (d *DirSink) appendOutcome(b []byte, e *Event) []byte {
	if e.Dedup != DedupOff && int(e.Dedup) < len(dedupNames) {
		b = appendStr(b, "dedup", dedupNames[e.Dedup])
	}
	if e.Fingerprint != 0 {
		b = append(b, `,"fp":"`...)
		b = appendHex(b, e.Fingerprint)
		b = append(b, '"')
	}
	if e.ChunkFetch {
		b = append(b, `,"chunk":true`...)
	}
	if e.Brake {
		b = append(b, `,"brake":true`...)
	}
	b = appendInt(b, "compact", e.Compactions)
	b = appendInt(b, "lat_us", int(e.Latency.Microseconds()))
	b = appendStr(b, "err", vocab(e.Err, errClasses))
	b = appendStr(b, "skip", vocab(e.Untouched, untouched))
	if r := d.o.SampleRate; r > 0 && r < 1 {
		b = append(b, `,"rate":`...)
		b = strconv.AppendFloat(b, r, 'g', 4, 64)
	}
	return b
}

func appendStr(b []byte, k, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	return appendJSONString(b, v)
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexd[r>>4], hexd[r&0xf])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

func appendInt(b []byte, k string, v int) []byte {
	if v == 0 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, int64(v), 10)
}

func appendHex(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for i := 60; i >= 0; i -= 4 {
		b = append(b, digits[(v>>uint(i))&0xf])
	}
	return b
}
