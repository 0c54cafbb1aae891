package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptCmds are commands the scripts use besides testscript's own.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// binfile FILE N writes N bytes that are not text (every byte value
	// in turn, NUL and invalid UTF-8 included) to FILE.
	"binfile": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: binfile FILE N")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 7)
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
	},
	// claudejson FILE MB writes a ~/.claude.json of about MB megabytes
	// the way heavy use grows one: a user-scope server near the top, many
	// projects with long prompt histories, and a local-scope server in
	// the last project.
	"claudejson": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: claudejson FILE MB")
		}
		mb, err := strconv.Atoi(args[1])
		ts.Check(err)
		var b strings.Builder
		b.WriteString("{\n  \"numStartups\": 1,\n  \"mcpServers\": {\n    \"fs\": {\n      \"command\": \"npx\",\n      \"args\": [\n        \"-y\",\n        \"@modelcontextprotocol/server-filesystem\",\n        \".\"\n      ]\n    }\n  },\n  \"projects\": {\n")
		for p := 0; b.Len() < mb<<20; p++ {
			fmt.Fprintf(&b, "    \"/home/dev/p%d\": {\n      \"allowedTools\": [],\n      \"history\": [\n", p)
			for j := range 100 {
				sep := ","
				if j == 99 {
					sep = ""
				}
				fmt.Fprintf(&b, "        {\n          \"display\": \"prompt %d %s\",\n          \"pastedContents\": {}\n        }%s\n", j, strings.Repeat("x", 80), sep)
			}
			b.WriteString("      ],\n      \"mcpServers\": {}\n    },\n")
		}
		b.WriteString("    \"/home/dev/zz\": {\n      \"mcpServers\": {\n        \"pg\": {\n          \"command\": \"uvx\",\n          \"args\": [\n            \"mcp-server-postgres\"\n          ]\n        }\n      }\n    }\n  }\n}\n")
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
	},
	// resources FILE SECONDS KB checks a "/usr/bin/time -f '%U %S %M'"
	// record: user plus system CPU time under SECONDS, peak resident
	// memory under KB.
	"resources": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 3 {
			ts.Fatalf("usage: resources FILE SECONDS KB")
		}
		lines := strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n")
		f := strings.Fields(lines[len(lines)-1])
		if len(f) != 3 {
			ts.Fatalf("%s: want \"USER SYS KB\", got %q", args[0], lines[len(lines)-1])
		}
		user, err1 := strconv.ParseFloat(f[0], 64)
		sys, err2 := strconv.ParseFloat(f[1], 64)
		kb, err3 := strconv.Atoi(f[2])
		maxS, err4 := strconv.ParseFloat(args[1], 64)
		maxKB, err5 := strconv.Atoi(args[2])
		for _, err := range []error{err1, err2, err3, err4, err5} {
			ts.Check(err)
		}
		ts.Logf("cpu %.2f s, peak RSS %d KB", user+sys, kb)
		if user+sys >= maxS {
			ts.Fatalf("cpu time %.2f s, want under %s s", user+sys, args[1])
		}
		if kb >= maxKB {
			ts.Fatalf("peak RSS %d KB, want under %d KB", kb, maxKB)
		}
	},
	// upstream VAR [LOG] starts an HTTP server for the rest of the
	// script and sets VAR to its URL. It answers every request with one
	// JSON line naming the path and the x-api-key it was sent; with LOG,
	// it appends "METHOD PATH Authorization=VALUE" for each request to
	// that file.
	"upstream": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 1 || len(args) > 2 {
			ts.Fatalf("usage: upstream VAR [LOG]")
		}
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if len(args) == 2 {
				mu.Lock()
				f, err := os.OpenFile(ts.MkAbs(args[1]), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
				if err == nil {
					fmt.Fprintf(f, "%s %s Authorization=%s\n", r.Method, r.URL.Path, r.Header.Get("Authorization"))
					f.Close()
				}
				mu.Unlock()
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, "{\"upstream\":\"reached\",\"path\":%q,\"key\":%q}\n", r.URL.Path, r.Header.Get("X-Api-Key"))
		}))
		ts.Defer(srv.Close)
		ts.Setenv(args[0], srv.URL)
	},
}
