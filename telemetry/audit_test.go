package telemetry

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAudit(t *testing.T) {
	dir := t.TempDir()
	file := `{"v":1,"entry":"proxy","shape":"array_of_objects","tool":"secret-project-name"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	sources := func(yield func(string, []byte) bool) {
		// The schema's own words are not content; the tool name is.
		yield("a", []byte(`shape: array_of_objects`))
		yield("b", []byte(`call secret-project-name now`))
	}
	leaks, files, err := Audit(dir, sources)
	if err != nil || files != 1 {
		t.Fatalf("Audit: %d files, %v", files, err)
	}
	if len(leaks) == 0 {
		t.Fatal("no leak found")
	}
	for _, l := range leaks {
		if l.Source != "b" || l.File != "s.jsonl" {
			t.Errorf("leak %+v", l)
		}
	}
	if _, _, err := Audit(filepath.Join(dir, "["), sources); err == nil {
		t.Error("a bad pattern is an error")
	}
}
