package shape_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/internal/replay"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
)

var (
	runnerPassed = regexp.MustCompile(`(\d+) passed`)
	shownPass    = regexp.MustCompile(`(?m)^(--- PASS: .*|test .* \.\.\. ok|\S+::\S+ PASSED .*)$`)
)

// runnerTotal finds the runner's count of passed tests: the last "N
// passed" outside the lines that count test files or suites.
func runnerTotal(s string) []string {
	var m []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, "Suites") || strings.Contains(l, "Test Files") {
			continue
		}
		if x := runnerPassed.FindStringSubmatch(l); x != nil {
			m = x
		}
	}
	return m
}

var update = flag.Bool("update", false, "rewrite testdata/*.txtar golden files")

// TestGolden pins the in-band text of every shape (testdata/*.txtar: the
// call, the input, the shaped text a model reads and the Report), and
// checks that each lossless or display shaping expands back and each
// elision's chunks join back to the input.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	c := tokens.O200kBase()
	ctx := context.Background()
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string]int{}
			for i, f := range ar.Files {
				sec[f.Name] = i
			}
			var call struct {
				Tool    string          `json:"tool"`
				Input   json.RawMessage `json:"input"`
				WorkDir string          `json:"workdir"`
				// ReadForm is Options.ReadForm.
				ReadForm string `json:"read_form"`
			}
			if err := json.Unmarshal(ar.Files[sec["call"]].Data, &call); err != nil {
				t.Fatal(err)
			}
			if string(call.Input) == "null" {
				call.Input = nil
			}
			input := string(ar.Files[sec["input"]].Data)
			fo := &fit.Options{Store: &store.Mem{}, Counter: c, Budget: 1 << 20}
			var handle string
			o := &shape.Options{Counter: c, ReadForm: call.ReadForm, Keep: func(text string, ranges [][2]int) (string, error) {
				h, err := fit.StoreLines(ctx, text, ranges, fo)
				handle = h
				return fit.FetchCommand(fo, h), err
			}}
			res := shape.Shape(input, shape.Call{Tool: call.Tool, Input: call.Input, WorkDir: call.WorkDir}, o)
			report := fmt.Sprintf("shape: %s\nclass: %s\nrules: %s\ntokens: %d -> %d\nanchors: %d total, %d kept, %d lost\nwhy: %s\n",
				res.Shape, res.Class, strings.Join(res.Rules, ", "), res.Tokens, res.ShapedTokens,
				res.Anchors.Total, res.Anchors.Kept, res.Anchors.Lost, res.Why)
			switch res.Class {
			case shape.Lossless, shape.Display:
				back, err := shape.Expand(res.Text)
				want := input
				if res.Class == shape.Display {
					want = shape.TerminalView(input)
				}
				if err != nil || back != want {
					t.Errorf("expand(shape(input)) != input (err %v)", err)
				}
			case shape.Elide:
				got, err := replay.JoinChunks(func(n int) (string, error) {
					ch, err := fit.FetchChunk(ctx, handle, n, fo)
					return ch.Text, err
				})
				if err != nil || got != strings.TrimSuffix(input, "\n") {
					t.Errorf("the chunks do not join back to the input (%v)", err)
				}
				if res.Anchors.Lost != 0 {
					t.Errorf("%d anchors lost", res.Anchors.Lost)
				}
				// The counts add up to the runner's own total.
				if m := runnerTotal(input); m != nil {
					got := foldedPassed(res.Text)
					got += len(shownPass.FindAllString(res.Text, -1))
					if want, _ := strconv.Atoi(m[1]); got != want {
						t.Errorf("passed tests: %d folded and shown, the runner says %d", got, want)
					}
				}
			}
			if res.Class != shape.None {
				checkInband(t, res.Text)
			}
			want := res.Text
			if *update {
				ar.Files[sec["want"]].Data = []byte(want)
				ar.Files[sec["report"]].Data = []byte(report)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got := string(ar.Files[sec["want"]].Data); got != want {
				t.Errorf("shaped text differs (run with -update after checking):\n--- got\n%s\n--- want\n%s", want, got)
			}
			if got := string(ar.Files[sec["report"]].Data); got != report {
				t.Errorf("report differs:\n--- got\n%s\n--- want\n%s", report, got)
			}
			if bytes.Contains([]byte(want), []byte("\x00")) {
				t.Errorf("a placeholder is left in the text")
			}
		})
	}
}

// checkInband reads the lines a shaping wrote with inband's parser: the
// header line, and every marker in the text.
func checkInband(t *testing.T, text string) {
	t.Helper()
	head, body, _ := strings.Cut(text, "\n")
	if _, err := inband.Parse(head); err != nil {
		t.Errorf("inband.Parse(%q): %v", head, err)
	}
	for l := range strings.SplitSeq(body, "\n") {
		if inband.IsGap(l) {
			if _, err := inband.Parse(l); err != nil {
				t.Errorf("inband.Parse(%q): %v", l, err)
			}
		}
	}
}

// foldedPassed adds up the passed tests the markers of an elided text
// count ("[… 24 lines left out: lines 3–26 (12 tests passed); chunk 2 …]").
func foldedPassed(text string) int {
	n := 0
	for l := range strings.SplitSeq(text, "\n") {
		v, err := inband.Parse(l)
		f, ok := v.(inband.Folded)
		if err != nil || !ok {
			continue
		}
		for p := range strings.SplitSeq(f.What, ", ") {
			count, what, _ := strings.Cut(p, " ")
			if k, err := strconv.Atoi(count); err == nil && (what == "tests passed" || what == "test passed") {
				n += k
			}
		}
	}
	return n
}
