package mcpproxy

import "bytes"

// envelope holds the raw top-level members of a JSON-RPC message that the
// relay routes on; nil when absent.
type envelope struct {
	id, method, result, error []byte
}

// scanEnvelope finds the top-level members of a JSON object without
// parsing the values: strings are skipped with IndexByte, containers by
// depth. It checks structure, not every byte: relayed messages stay as
// the upstream wrote them, and a value the relay rewrites is parsed fully
// then. ok is false when frame is not an object.
func scanEnvelope(frame []byte) (env envelope, ok bool) {
	i := skipWS(frame, 0)
	if i >= len(frame) || frame[i] != '{' {
		return env, false
	}
	i = skipWS(frame, i+1)
	if i < len(frame) && frame[i] == '}' {
		return env, true
	}
	for i < len(frame) {
		if frame[i] != '"' {
			return env, false
		}
		kEnd, ok := skipString(frame, i)
		if !ok {
			return env, false
		}
		key := frame[i+1 : kEnd-1]
		i = skipWS(frame, kEnd)
		if i >= len(frame) || frame[i] != ':' {
			return env, false
		}
		i = skipWS(frame, i+1)
		vEnd, ok := skipValue(frame, i)
		if !ok {
			return env, false
		}
		val := frame[i:vEnd]
		switch string(key) {
		case "id":
			env.id = val
		case "method":
			env.method = val
		case "result":
			env.result = val
		case "error":
			env.error = val
		}
		i = skipWS(frame, vEnd)
		if i >= len(frame) {
			return env, false
		}
		switch frame[i] {
		case ',':
			i = skipWS(frame, i+1)
		case '}':
			return env, skipWS(frame, i+1) == len(frame)
		default:
			return env, false
		}
	}
	return env, false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1, true
		}
		j++
	}
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				j, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	}
	j := i
	for ; j < len(b); j++ {
		if c := b[j]; c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			break
		}
	}
	return j, j > i
}
