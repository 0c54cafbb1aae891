// Package corpus finds the shared corpus of real tool responses and the TOON
// conformance fixtures that tests and benchmarks read.
//
// The files live outside the repository (some licences forbid shipping
// them), in ../shared beside the checkout, or wherever TERSE_SHARED points.
// Tests call [Dir] or [Files] and skip cleanly when the folder is absent.
package corpus

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Shared returns the shared folder, or "" when it cannot be found.
func Shared() string {
	if d := os.Getenv("TERSE_SHARED"); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	// internal/corpus/corpus.go → module root → ../shared
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	d := filepath.Join(filepath.Dir(root), "shared")
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return d
	}
	return ""
}

// Dir returns the named folder under the shared folder ("corpus",
// "toon-spec/fixtures", "kimbap-manifests"), skipping tb when it is absent.
func Dir(tb testing.TB, name string) string {
	tb.Helper()
	s := Shared()
	if s == "" {
		tb.Skipf("shared folder not found (set TERSE_SHARED); skipping tests on %s", name)
	}
	d := filepath.Join(s, name)
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		tb.Skipf("%s not found; skipping", d)
	}
	return d
}

// Files returns the corpus files whose names end in one of exts (".json",
// ".md", ...), sorted, as paths. It skips tb when the corpus is absent.
func Files(tb testing.TB, exts ...string) []string {
	tb.Helper()
	dir := Dir(tb, "corpus")
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		for _, e := range exts {
			if strings.HasSuffix(p, e) {
				out = append(out, p)
				break
			}
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// Name returns path relative to the corpus folder, for subtest names.
func Name(path string) string {
	if i := strings.LastIndex(path, "corpus"+string(filepath.Separator)); i >= 0 {
		return path[i+len("corpus")+1:]
	}
	return filepath.Base(path)
}
