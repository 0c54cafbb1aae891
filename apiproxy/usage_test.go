package apiproxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go"
	"github.com/openai/openai-go/responses"
	yaml "go.yaml.in/yaml/v3"

	"github.com/terse-dev/terse/internal/corpus"
)

// recordedResponse is one recorded HTTP response body of a provider.
type recordedResponse struct {
	name     string
	provider string // "anthropic" or "openai"
	sse      bool
	body     []byte
}

// recordedResponses reads every recorded response in the corpus's
// llm-api folder: raw .sse streams, .chunks.jsonl event logs (split into
// one response per start event), and the response bodies of .json
// (request/response pairs) and .yaml (cassettes) recordings, streamed or
// not. It skips tb when the corpus is absent.
func recordedResponses(tb testing.TB) []recordedResponse {
	root := filepath.Join(corpus.Dir(tb, "corpus"), "llm-api")
	var out []recordedResponse
	for _, provider := range []string{"anthropic", "openai"} {
		files, _ := filepath.Glob(filepath.Join(root, provider, "*"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			name := provider + "/" + filepath.Base(f)
			add := func(sse bool, body []byte) {
				if sse {
					for i, part := range splitResponses(body) {
						out = append(out, recordedResponse{name: name + "#" + itoa(len(out)) + "." + itoa(i), provider: provider, sse: true, body: part})
					}
					return
				}
				out = append(out, recordedResponse{name: name + "#" + itoa(len(out)), provider: provider, body: body})
			}
			switch {
			case strings.HasSuffix(f, ".sse"):
				add(true, data)
			case strings.HasSuffix(f, ".chunks.jsonl"):
				var b bytes.Buffer
				sc := bufio.NewScanner(bytes.NewReader(data))
				sc.Buffer(nil, 1<<24)
				for sc.Scan() {
					if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
						b.WriteString("data: ")
						b.Write(line)
						b.WriteString("\n\n")
					}
				}
				add(true, b.Bytes())
			case strings.HasSuffix(f, ".json"):
				var pairs []struct {
					Response struct {
						Headers map[string]string `json:"headers"`
						Body    string            `json:"body"`
					} `json:"response"`
				}
				if err := json.Unmarshal(data, &pairs); err != nil {
					tb.Fatalf("%s: %v", name, err)
				}
				for _, p := range pairs {
					add(strings.Contains(p.Response.Headers["content-type"], "event-stream"), []byte(p.Response.Body))
				}
			case strings.HasSuffix(f, ".yaml"):
				var c struct {
					Interactions []struct {
						Response struct {
							Headers map[string][]string `yaml:"headers"`
							Body    struct {
								String string `yaml:"string"`
							} `yaml:"body"`
							Parsed any `yaml:"parsed_body"`
						} `yaml:"response"`
					} `yaml:"interactions"`
				}
				if err := yaml.Unmarshal(data, &c); err != nil {
					tb.Fatalf("%s: %v", name, err)
				}
				for _, it := range c.Interactions {
					ct := ""
					for k, v := range it.Response.Headers {
						if strings.EqualFold(k, "content-type") && len(v) > 0 {
							ct = v[0]
						}
					}
					body := []byte(it.Response.Body.String)
					if it.Response.Parsed != nil {
						if body, err = json.Marshal(it.Response.Parsed); err != nil {
							tb.Fatalf("%s: %v", name, err)
						}
					}
					add(strings.Contains(ct, "event-stream"), body)
				}
			}
		}
	}
	if len(out) == 0 {
		tb.Skip("no recorded responses")
	}
	return out
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// splitResponses splits a recorded event log into the responses it holds:
// a new one starts at each Anthropic message_start, OpenAI
// response.created, or Chat Completions chunk of another id.
func splitResponses(body []byte) [][]byte {
	var out [][]byte
	var cur bytes.Buffer
	lastID := ""
	for _, ev := range bytes.SplitAfter(body, []byte("\n\n")) {
		data := sseData(ev)
		start := false
		var head struct {
			Type   string `json:"type"`
			ID     string `json:"id"`
			Object string `json:"object"`
		}
		if json.Unmarshal(data, &head) == nil {
			switch {
			case head.Type == "message_start", head.Type == "response.created":
				start = true
			case head.Object == "chat.completion.chunk":
				start = head.ID != lastID && lastID != ""
				lastID = head.ID
			}
		}
		if start && cur.Len() > 0 {
			out = append(out, bytes.Clone(cur.Bytes()))
			cur.Reset()
		}
		cur.Write(ev)
	}
	if bytes.TrimSpace(cur.Bytes()) != nil {
		out = append(out, cur.Bytes())
	}
	return out
}

// sseData is the data of one SSE event ("" when it has none).
func sseData(ev []byte) []byte {
	var data []byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimSpace(d)...)
		}
	}
	return data
}

// sdkUsage is the usage the provider's official Go SDK reads from a
// response: Anthropic's Message.Accumulate over the events (or the
// Message body), OpenAI's last chunk with usage, the Responses API's
// response of its last event carrying one (or the bodies). It is the
// oracle the proxy's reading is compared with.
func sdkUsage(t *testing.T, r recordedResponse) Usage {
	var u Usage
	anth := func(x anthropic.Usage) {
		u = Usage{Input: int(x.InputTokens), Output: int(x.OutputTokens), CacheRead: int(x.CacheReadInputTokens),
			CacheCreation: int(x.CacheCreationInputTokens), CacheCreation1h: int(x.CacheCreation.Ephemeral1hInputTokens), Reported: 1}
	}
	chat := func(x openai.CompletionUsage) {
		c := int(x.PromptTokensDetails.CachedTokens)
		u = Usage{Input: int(x.PromptTokens) - c, Output: int(x.CompletionTokens), CacheRead: c, Reported: 1}
	}
	resp := func(x responses.ResponseUsage) {
		c := int(x.InputTokensDetails.CachedTokens)
		u = Usage{Input: int(x.InputTokens) - c, Output: int(x.OutputTokens), CacheRead: c, Reported: 1}
	}
	if !r.sse {
		switch {
		case r.provider == "anthropic":
			var m anthropic.Message
			if json.Unmarshal(r.body, &m) == nil && m.JSON.Usage.Valid() {
				anth(m.Usage)
			}
		case bytes.Contains(r.body, []byte(`"prompt_tokens"`)):
			var c openai.ChatCompletion
			if json.Unmarshal(r.body, &c) == nil && c.JSON.Usage.Valid() {
				chat(c.Usage)
			}
		default:
			var x responses.Response
			if json.Unmarshal(r.body, &x) == nil && x.JSON.Usage.Valid() {
				resp(x.Usage)
			}
		}
		return u
	}
	var acc anthropic.Message
	for _, ev := range bytes.SplitAfter(r.body, []byte("\n\n")) {
		data := sseData(ev)
		if len(data) == 0 || data[0] != '{' {
			continue
		}
		switch r.provider {
		case "anthropic":
			var e anthropic.MessageStreamEventUnion
			if json.Unmarshal(data, &e) != nil {
				continue
			}
			if acc.Accumulate(e) == nil && (e.Type == "message_start" || e.Type == "message_delta") {
				anth(acc.Usage)
			}
		default:
			var head struct {
				Object string `json:"object"`
			}
			json.Unmarshal(data, &head)
			if head.Object == "chat.completion.chunk" {
				var c openai.ChatCompletionChunk
				if json.Unmarshal(data, &c) == nil && c.JSON.Usage.Valid() {
					chat(c.Usage)
				}
				continue
			}
			var e responses.ResponseStreamEventUnion
			if json.Unmarshal(data, &e) == nil && e.Response.JSON.Usage.Valid() {
				resp(e.Response.Usage)
			}
		}
	}
	return u
}

// TestUsageRecorded: the usage read from every recorded response of both
// providers, streamed and not, in reads of any size, is the usage the
// provider's official SDK reads from it.
func TestUsageRecorded(t *testing.T) {
	rs := recordedResponses(t)
	counts := map[string]int{}
	for _, r := range rs {
		want := sdkUsage(t, r)
		if want.Reported == 1 {
			kind := r.provider + " body"
			if r.sse {
				kind = r.provider + " stream"
			}
			counts[kind]++
		}
		for _, chunk := range []int{1, 7, 4096} {
			var got Usage
			ur := newUsageReader(io.NopCloser(&chunkReader{b: r.body, n: chunk}), r.sse, func(u Usage) { got = u })
			passed, err := io.ReadAll(ur)
			ur.Close()
			if err != nil || !bytes.Equal(passed, r.body) {
				t.Fatalf("%s: body not passed through unchanged (%v)", r.name, err)
			}
			if got != want {
				t.Errorf("%s (reads of %d): usage %+v, the SDK reads %+v", r.name, chunk, got, want)
				break
			}
		}
	}
	t.Logf("%d recorded responses; with usage: %v", len(rs), counts)
	for _, k := range []string{"anthropic stream", "openai stream", "openai body"} {
		if counts[k] == 0 {
			t.Errorf("no recorded %s with usage was checked", k)
		}
	}
}

// TestUsageFields: the fields of both providers, on constructed bodies.
func TestUsageFields(t *testing.T) {
	for _, c := range []struct {
		name string
		sse  bool
		body string
		want Usage
	}{
		{"anthropic body with the TTL split", false,
			`{"type":"message","usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":5000,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"output_tokens":40}}`,
			Usage{Input: 12, CacheCreation: 300, CacheCreation1h: 200, CacheRead: 5000, Output: 40, Reported: 1}},
		{"anthropic stream, the delta's totals win", true,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"cache_read_input_tokens\":10,\"output_tokens\":1}}}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":5}}\n\n",
			Usage{Input: 12, CacheRead: 10, Output: 5, Reported: 1}},
		{"openai chat, cached tokens are part of the prompt", false,
			`{"object":"chat.completion","usage":{"prompt_tokens":1000,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":768}}}`,
			Usage{Input: 232, CacheRead: 768, Output: 7, Reported: 1}},
		{"openai chat stream, usage only on the last chunk", true,
			"data: {\"object\":\"chat.completion.chunk\",\"usage\":null}\n\ndata: {\"object\":\"chat.completion.chunk\",\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":3,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\ndata: [DONE]\n\n",
			Usage{Input: 50, Output: 3, Reported: 1}},
		{"responses stream", true,
			"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":2048,\"input_tokens_details\":{\"cached_tokens\":1024},\"output_tokens\":9}}}\n\n",
			Usage{Input: 1024, CacheRead: 1024, Output: 9, Reported: 1}},
		{"no usage", false, `{"type":"error","error":{"type":"overloaded_error"}}`, Usage{}},
		{"usage in text only", true, "data: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"\\\"usage\\\"\"}}\n\n", Usage{}},
	} {
		var got Usage
		ur := newUsageReader(io.NopCloser(strings.NewReader(c.body)), c.sse, func(u Usage) { got = u })
		io.ReadAll(ur)
		ur.Close()
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
