package terse

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
)

// numberedRead is a Read result of n lines as Claude Code renders it.
func numberedRead(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "%6d→\tx := compute(%d) // step\n", i, i)
	}
	return sb.String()
}

// TestShapingStage: a text result of a known shape is shaped, declared
// in the Report, its savings add up, the same input gives the same bytes
// and terse expand gives the original back.
func TestShapingStage(t *testing.T) {
	ctx := context.Background()
	p, err := New(&Options{Format: "auto", Shape: &shape.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	in := numberedRead(60)
	req := &Request{Tool: "Read", ToolInput: `{"file_path":"/p/x.go"}`}
	res, err := p.ProcessString(ctx, in, req)
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if rep.Shape != "read" || rep.ShapeClass != "lossless" || len(rep.ShapeRules) != 1 || rep.ShapeRules[0] != "gutter" {
		t.Fatalf("report: shape %q class %q rules %v", rep.Shape, rep.ShapeClass, rep.ShapeRules)
	}
	if rep.OutputTokens >= rep.RawTokens || rep.Saved.Total() != rep.RawTokens-rep.OutputTokens || rep.Saved.Encoding <= 0 {
		t.Errorf("savings: raw %d out %d saved %+v", rep.RawTokens, rep.OutputTokens, rep.Saved)
	}
	if back, err := shape.Expand(res.Text); err != nil || back != in {
		t.Errorf("expand: %v", err)
	}
	again, _ := p.ProcessString(ctx, in, req)
	if again.Text != res.Text {
		t.Error("the same input gave different bytes")
	}
}

// TestShapingOff: without Options.Shape, text is not shaped (the zero
// Options change nothing).
func TestShapingOff(t *testing.T) {
	p, _ := New(nil)
	in := numberedRead(60)
	res, err := p.ProcessString(context.Background(), in, &Request{Tool: "Read"})
	if err != nil || res.Text != in || res.Report.ShapeClass != "" {
		t.Errorf("shaped without Options.Shape (err %v)", err)
	}
}

// TestShapedThenFitted: a shaped text that still needs fitting is fitted
// as the original, with no header declaring a rule the fitted text does
// not follow.
func TestShapedThenFitted(t *testing.T) {
	p, err := New(&Options{Budget: 400, Shape: &shape.Options{}, Store: &store.Mem{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.ProcessString(context.Background(), numberedRead(2000), &Request{Tool: "Read"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Report.Truncated || res.Report.ShapeClass != "" || strings.HasPrefix(res.Text, "> [lossless") {
		t.Errorf("truncated %v class %q text %q", res.Report.Truncated, res.Report.ShapeClass, res.Text[:80])
	}
	if !strings.Contains(res.Text, "     1→") {
		t.Errorf("the fitted text is not the original's lines: %q", res.Text[:80])
	}
}

// TestShapedWithIDLine: a shaped result recorded by the dedup stage leads
// with its id line, and terse expand still gives the original.
func TestShapedWithIDLine(t *testing.T) {
	p, err := New(&Options{Shape: &shape.Options{}, Dedup: dedup.New(dedup.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	in := numberedRead(80)
	res, err := p.ProcessString(context.Background(), in, &Request{Tool: "Read"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Text, "> [id: ") || res.Report.ShapeClass != "lossless" {
		t.Fatalf("want an id line and a shaping: %q", res.Text[:80])
	}
	if back, err := shape.Expand(res.Text); err != nil || back != in {
		t.Errorf("expand: %v", err)
	}
}

// TestShapingElisionNeedsStore: test output is elided only when its
// chunks can be stored; the elision names its chunks, and they give the
// original back.
func TestShapingElisionNeedsStore(t *testing.T) {
	var sb strings.Builder
	for i := range 40 {
		fmt.Fprintf(&sb, "=== RUN   TestCase%02d\n--- PASS: TestCase%02d (0.00s)\n", i, i)
	}
	sb.WriteString("=== RUN   TestBroken\n    x_test.go:9: got 1, want 2\n--- FAIL: TestBroken (0.00s)\nFAIL\nFAIL\texample.com/x\t0.01s\nFAIL\n")
	in := sb.String()
	req := &Request{Tool: "Bash", ToolInput: `{"command":"go test ./..."}`}
	ctx := context.Background()
	p, _ := New(&Options{Shape: &shape.Options{}})
	res, err := p.ProcessString(ctx, in, req)
	if err != nil || res.Report.ShapeClass == "elide" {
		t.Fatalf("elided without a store (err %v)", err)
	}
	p, _ = New(&Options{Shape: &shape.Options{}, Store: &store.Mem{}})
	res, err = p.ProcessString(ctx, in, req)
	if err != nil || res.Report.ShapeClass != "elide" || res.Report.Anchors == nil || res.Report.Anchors.Lost != 0 {
		t.Fatalf("not elided with a store: class %q (err %v)", res.Report.ShapeClass, err)
	}
	for _, want := range []string{"--- FAIL: TestBroken (0.00s)", "x_test.go:9: got 1, want 2", "FAIL\texample.com/x\t0.01s", "(40 tests passed)"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("elided text lacks %q:\n%s", want, res.Text)
		}
	}
}

// refuse is a hint policy that refuses every family.
type refuse struct{}

func (refuse) Allow(string) bool { return false }
func (refuse) Take(string) bool  { return false }

// TestShapingElisionHonoursHints: with the "more" hint family refused,
// test output is not elided (an elision is a "more" notice), though it
// may still be shaped losslessly.
func TestShapingElisionHonoursHints(t *testing.T) {
	var sb strings.Builder
	for i := range 40 {
		fmt.Fprintf(&sb, "=== RUN   TestCase%02d\n--- PASS: TestCase%02d (0.00s)\n", i, i)
	}
	sb.WriteString("PASS\nok  \texample.com/x\t0.01s\n")
	p, _ := New(&Options{Shape: &shape.Options{}, Store: &store.Mem{}})
	res, err := p.ProcessString(context.Background(), sb.String(), &Request{Tool: "Bash", ToolInput: `{"command":"go test ./..."}`, Hints: refuse{}})
	if err != nil || res.Report.ShapeClass == "elide" {
		t.Errorf("elided with the more family refused (err %v): %q", err, res.Text[:80])
	}
}
