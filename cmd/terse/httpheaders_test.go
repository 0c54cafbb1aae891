package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestUpstreamClient: headers reach the server, ${VAR} expanded; an unset
// variable or a bad name is an error that names it.
func TestUpstreamClient(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer srv.Close()
	t.Setenv("MCP_TOKEN", "s3cret")
	c, err := upstreamClient(map[string]string{"Authorization": "Bearer ${MCP_TOKEN}", "x-team": "a"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Get("Authorization") != "Bearer s3cret" || got.Get("X-Team") != "a" {
		t.Errorf("headers sent: %v", got)
	}
	if c, err := upstreamClient(nil); c != nil || err != nil {
		t.Errorf("no headers: %v, %v", c, err)
	}
	for h, want := range map[string]string{
		"Bearer ${NOT_SET_ANYWHERE}": "NOT_SET_ANYWHERE is not set",
	} {
		if _, err := upstreamClient(map[string]string{"Authorization": h}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", h, err, want)
		}
	}
	if _, err := upstreamClient(map[string]string{"Bad Name": "x"}); err == nil {
		t.Errorf("a header name with a space was accepted")
	}
}
