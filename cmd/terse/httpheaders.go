package main

import (
	"fmt"
	"net/http"
	"net/textproto"
	"os"
	"slices"
	"strings"
)

// An MCP server reached over HTTP often wants credentials: a bearer
// token, an API key header. "terse proxy --upstream URL --header 'NAME:
// VALUE'" and [[servers]] headers send them with every request. A value
// may name environment variables as ${VAR}, so that a secret need not be
// written into a configuration file or show on a command line.

// headerFlag collects repeated --header "Name: value" flags.
type headerFlag map[string]string

func (h headerFlag) String() string { return "" }

func (h headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("want \"Name: value\"")
	}
	h[strings.TrimSpace(name)] = strings.TrimSpace(value)
	return nil
}

// headerEnvFlag collects repeated --header-env "Name=VAR" flags into the
// same headers, as "${VAR}".
type headerEnvFlag map[string]string

func (h headerEnvFlag) String() string { return "" }

func (h headerEnvFlag) Set(s string) error {
	name, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(v) == "" {
		return fmt.Errorf("want \"Name=VAR\"")
	}
	h[strings.TrimSpace(name)] = "${" + strings.TrimSpace(v) + "}"
	return nil
}

// upstreamClient returns an HTTP client that sends headers with every
// request, ${VAR} in each value replaced by the environment variable; nil
// when there are no headers. An unset variable or a malformed header is
// an error naming it.
func upstreamClient(headers map[string]string) (*http.Client, error) {
	if len(headers) == 0 {
		return nil, nil
	}
	h := http.Header{}
	for _, name := range slices.Sorted(mapKeys(headers)) {
		if !validHeaderName(name) {
			return nil, fmt.Errorf("header %q: not a valid header name", name)
		}
		var missing []string
		value := os.Expand(headers[name], func(v string) string {
			val, ok := os.LookupEnv(v)
			if !ok {
				missing = append(missing, v)
			}
			return val
		})
		if len(missing) > 0 {
			return nil, fmt.Errorf("header %s: environment variable %s is not set", name, strings.Join(missing, ", "))
		}
		if strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("header %s: the value holds a line break", name)
		}
		h.Set(textproto.CanonicalMIMEHeaderKey(name), value)
	}
	return &http.Client{Transport: &headerTransport{base: http.DefaultTransport, header: h}}, nil
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

// headerTransport adds its headers to every request.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.header {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}
