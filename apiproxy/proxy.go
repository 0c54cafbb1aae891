package apiproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/telemetry"
)

// The official endpoints, the default upstreams.
const (
	DefaultAnthropic = "https://api.anthropic.com"
	DefaultOpenAI    = "https://api.openai.com"
)

// DefaultMaxBody is the largest request body rewritten; larger ones are
// streamed through untouched, so memory stays bounded.
const DefaultMaxBody = 16 << 20

// BypassHeader on a request with the value "1", "true" or "yes" (in any
// case) forwards it untouched. The header is terse's own: it is never
// forwarded, whatever its value.
const BypassHeader = "X-Terse-Bypass"

// bypassed reports whether a request asks to be forwarded untouched.
func bypassed(h http.Header) bool {
	switch strings.ToLower(strings.TrimSpace(h.Get(BypassHeader))) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// Config configures a [Proxy].
type Config struct {
	// Anthropic and OpenAI are the upstream base URLs ("": the official
	// endpoints). A request's path is appended to the base's path.
	Anthropic, OpenAI string
	// Rewriter rewrites requests; nil forwards every request untouched.
	Rewriter *Rewriter
	// DryRun forwards the original requests and only records what the
	// rewriting would have saved.
	DryRun bool
	// MaxBody is the largest body rewritten (0: DefaultMaxBody).
	MaxBody int64
	// Stats records each exchange; nil records nothing.
	Stats *Stats
	// Holdout, when its share is above 0, forwards that share of
	// conversations untouched (rewritten as in a dry run) for an A/B
	// comparison.
	Holdout Holdout
	// Telemetry receives one event per request considered for rewriting
	// (see docs/telemetry.md); nil records nothing. Events are made where
	// Stats counts tokens, off the request path, so they need Stats.
	Telemetry *telemetry.Recorder
	// CacheDiagnostics attaches Anthropic's cache diagnostics to each
	// rewritable Anthropic request (the diagnostics field naming the
	// conversation's previous response, and the beta header), so that
	// Stats can count the misses the provider reports by reason. Off,
	// neither is ever sent.
	CacheDiagnostics bool
	// Transport reaches the upstreams; nil uses a clone of
	// http.DefaultTransport that never asks for compression itself.
	Transport http.RoundTripper
	// ErrorLog receives upstream connection errors (never headers or
	// bodies); nil discards them.
	ErrorLog *log.Logger
}

// Proxy is the API proxy, an http.Handler.
type Proxy struct {
	cfg                 Config
	anthropic, openai   *url.URL
	rpAnthropic, rpOpen *httputil.ReverseProxy
	last                lastMessages // each conversation's latest response id
}

// New returns a proxy for cfg.
func New(cfg Config) (*Proxy, error) {
	if cfg.Anthropic == "" {
		cfg.Anthropic = DefaultAnthropic
	}
	if cfg.OpenAI == "" {
		cfg.OpenAI = DefaultOpenAI
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DisableCompression = true
		t.ResponseHeaderTimeout = 0
		cfg.Transport = t
	}
	if cfg.ErrorLog == nil {
		cfg.ErrorLog = log.New(io.Discard, "", 0)
	}
	p := &Proxy{cfg: cfg}
	var err error
	if p.anthropic, err = parseUpstream(cfg.Anthropic); err != nil {
		return nil, err
	}
	if p.openai, err = parseUpstream(cfg.OpenAI); err != nil {
		return nil, err
	}
	p.rpAnthropic = p.reverse(p.anthropic, anthropicError)
	p.rpOpen = p.reverse(p.openai, openaiError)
	return p, nil
}

func parseUpstream(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, errors.New("upstream " + s + ": want an http or https URL")
	}
	return u, nil
}

func (p *Proxy) reverse(target *url.URL, errBody func(msg string) []byte) *httputil.ReverseProxy {
	base := target.Scheme + "://" + target.Host + target.Path
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
			pr.Out.Header.Del(BypassHeader)
		},
		Transport:     p.cfg.Transport,
		FlushInterval: -1, // flush every write: events reach the client as they arrive
		ErrorLog:      p.cfg.ErrorLog,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// The upstream refused, was unreachable or failed before
			// answering: the client gets an error in its provider's shape
			// naming the upstream (the error without the request's URL,
			// whose query may hold credentials).
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
				w.WriteHeader(499) // the client went away: nobody reads this
				return
			}
			msg := "upstream " + base + " did not answer: " + err.Error()
			p.cfg.ErrorLog.Print(msg)
			if ex, _ := r.Context().Value(exchangeKey{}).(*exchange); ex != nil {
				ex.status = http.StatusBadGateway // what the client got
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			w.Write(errBody("terse api: " + msg))
		},
		ModifyResponse: func(resp *http.Response) error {
			ex, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
			if ex == nil {
				return nil
			}
			ex.status = resp.StatusCode
			if resp.Header.Get("Content-Encoding") != "" {
				ex.finish(Usage{})
				return nil
			}
			sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
			ur := newUsageReader(resp.Body, sse, ex.finish)
			ur.onMeta = ex.onMeta
			resp.Body = ur
			return nil
		},
	}
}

// rewritten reports whether a request's body is rewritten, and its format.
func rewritten(r *http.Request) (history.Format, string, bool) {
	if r.Method != http.MethodPost {
		return 0, "", false
	}
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/v1/messages":
		return history.Anthropic, "/v1/messages", true
	case "/v1/chat/completions":
		return history.OpenAI, "/v1/chat/completions", true
	case "/v1/responses":
		return history.Responses, "/v1/responses", true
	}
	return 0, "", false
}

// anthropicRequest reports whether a request is for Anthropic.
func anthropicRequest(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.HasPrefix(r.URL.Path, "/v1/complete") ||
		r.Header.Get("Anthropic-Version") != "" || r.Header.Get("X-Api-Key") != ""
}

// ServeHTTP forwards one request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rp := p.rpOpen
	if anthropicRequest(r) {
		rp = p.rpAnthropic
	}
	f, path, ok := rewritten(r)
	if !ok {
		rp.ServeHTTP(w, r)
		return
	}
	ex := &exchange{stats: p.cfg.Stats, rec: p.cfg.Telemetry, path: path, start: time.Now(), dryRun: p.cfg.DryRun}
	switch {
	case bypassed(r.Header):
		ex.skipped = "bypass"
	case r.Header.Get("Content-Encoding") != "":
		ex.skipped = "encoded body"
	case p.cfg.Rewriter == nil:
		ex.skipped = "no rewriter"
	default:
		body, whole, err := readUpTo(r.Body, r.ContentLength, p.cfg.MaxBody)
		if err != nil {
			// The client's body failed: let the upstream see the same.
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			ex.skipped = "request body: " + err.Error()
			break
		}
		if !whole {
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
			ex.skipped = "body over the size limit"
			break
		}
		ex.before = body
		window := 0
		if strings.Contains(r.Header.Get("Anthropic-Beta"), "context-1m") {
			window = 1_000_000 // the 1M-token context beta
		}
		if p.cfg.Holdout.Share > 0 {
			ex.thread, ex.arm = p.cfg.Holdout.assign(body, f)
			ex.held = ex.arm == ArmHoldout
		}
		res := p.cfg.Rewriter.RewriteWindow(body, f, window)
		if res.Err != nil {
			// Fail open: the original goes upstream (res.Body is nil).
			ex.internal = true
			p.cfg.ErrorLog.Printf("internal error rewriting a request to %s, forwarded unchanged: %s", path, oneLine(res.Err))
		}
		ex.res = res
		out := body
		if res.Body != nil && !p.cfg.DryRun && !ex.held {
			out = res.Body
		}
		ex.after = res.Body
		ex.onMeta = p.noteMeta(ex, "") // a client's own diagnostics are read too
		if p.cfg.CacheDiagnostics && f == history.Anthropic && !ex.internal {
			out = p.diagnose(ex, body, out, r.Header)
		}
		r.Body = io.NopCloser(bytes.NewReader(out))
		r.ContentLength = int64(len(out))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	}
	ex.added = time.Since(ex.start)
	ctx := r.Context()
	r = r.WithContext(withExchange(ctx, ex))
	defer ex.finish(Usage{}) // when the upstream failed before a response
	rp.ServeHTTP(w, r)
}

// readUpTo reads r whole when it holds at most limit bytes (whole true);
// otherwise it returns the first limit+1 bytes read so far. size is the
// length the request declared (-1: unknown).
func readUpTo(r io.Reader, size, limit int64) ([]byte, bool, error) {
	var buf bytes.Buffer
	if size >= 0 && size <= limit {
		buf.Grow(int(size) + bytes.MinRead) // one allocation, room to see EOF
	}
	n, err := io.Copy(&buf, io.LimitReader(r, limit+1))
	if err != nil {
		return buf.Bytes(), false, err
	}
	return buf.Bytes(), n <= limit, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// oneLine renders an internal error on one log line, with its stack when
// it has one.
func oneLine(err error) string {
	s := err.Error()
	if ie, ok := err.(*InternalError); ok {
		st := strings.TrimSpace(string(ie.Stack))
		st = strings.ReplaceAll(st, "\n\t", " ")
		s += " | stack: " + strings.ReplaceAll(st, "\n", " | ")
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// anthropicError is an Anthropic API error body.
func anthropicError(msg string) []byte {
	type detail struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		Type  string `json:"type"`
		Error detail `json:"error"`
	}{"error", detail{"api_error", msg}})
	return b
}

// openaiError is an OpenAI API error body.
func openaiError(msg string) []byte {
	type detail struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	b, _ := json.Marshal(struct {
		Error detail `json:"error"`
	}{detail{Message: msg, Type: "api_error"}})
	return b
}
