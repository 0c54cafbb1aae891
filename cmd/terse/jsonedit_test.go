package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestEditConfigJSONSet is the edit a settings writer makes: one member
// set in a user's JSON file through editConfig and jsonSet. Every other
// byte stays (the escape, the number, the layout), the backup holds the
// old file, and a second run changes nothing.
func TestEditConfigJSONSet(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	orig := "{\n  \"theme\": \"dark\\u2028\",\n  \"n\": 1.50,\n  \"permissions\": {\"allow\": []}\n}\n"
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	hook := "[\n  {\n    \"matcher\": \"*\"\n  }\n]"
	set := func(old []byte) ([]byte, error) {
		return jsonSet(old, []string{"hooks", "PostToolUse"}, hook)
	}
	_, updated, backup, err := editConfig(path, set)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"theme\": \"dark\\u2028\",\n  \"n\": 1.50,\n  \"permissions\": {\"allow\": []},\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\n        \"matcher\": \"*\"\n      }\n    ]\n  }\n}\n"
	if string(updated) != want {
		t.Errorf("updated =\n%s\nwant\n%s", updated, want)
	}
	if b, _ := os.ReadFile(backup); string(b) != orig {
		t.Errorf("backup %s = %q", backup, b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
	// Setting it again to the same value changes nothing.
	_, again, backup2, err := editConfig(path, set)
	if err != nil || string(again) != want || backup2 != "" {
		t.Errorf("second run: %q, backup %q, %v", again, backup2, err)
	}
	// Replacing a value keeps the layout around it.
	out, err := jsonSet([]byte(want), []string{"n"}, "2")
	if err != nil || string(out) != "{\n  \"theme\": \"dark\\u2028\",\n  \"n\": 2,\n  \"permissions\": {\"allow\": []},\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\n        \"matcher\": \"*\"\n      }\n    ]\n  }\n}\n" {
		t.Errorf("replace: %q, %v", out, err)
	}
}
