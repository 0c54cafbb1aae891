// Package layout holds repository-wide tests: every package has exactly one
// package doc, and packages import only the packages below them in the
// layering of DESIGN.md.
package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/terse-dev/terse"

// allowed lists, for each package, the packages of this module its non-test
// files may import. A package missing from the map fails the test, so a new
// package must take its place in the layering on purpose.
var allowed = map[string][]string{
	"tree":             {},
	"toolname":         {},
	"tokens":           {},
	"toon":             {"tree"},
	"filter":           {"tree", "tokens"},
	"render":           {"tree", "tokens", "toon"},
	"dedup":            {"tree"},
	"store":            {},
	"store/redisstore": {"store", "dedup"},
	"store/storetest":  {"store", "internal/corpus"},
	"internal/scale":   {}, // tests only: the gateway at scale (TERSE_SCALE)
	"fit":              {"tree", "tokens", "toon", "render", "store", "toolname"},
	"history":          {"tree", "tokens"},
	"":                 {"tree", "tokens", "toon", "filter", "render", "dedup", "store", "fit", "shape", "toolname"},
	"config":           {"", "shape", "tree", "tokens", "toon", "filter", "render", "dedup", "store", "store/redisstore", "fit", "history", "toolname"},
	"telemetry":        {"", "tokens", "toolname"},
	"mcpproxy":         {"", "tree", "tokens", "toon", "filter", "render", "dedup", "store", "fit", "config", "telemetry", "profile", "toolname"},
	"eval":             {"", "tree", "tokens", "toon", "render", "fit", "store"},
	"tune":             {"", "tree", "tokens", "dedup", "config", "telemetry", "profile"},
	"profile":          {"config", "toolname"},
	"fit/readtest":     {"tree"},
	"apiproxy":         {"tree", "tokens", "filter", "render", "history", "store", "telemetry"},
	"cmd/terse":        {"*"},
	"internal/corpus":  {},
	"internal/layout":  {},
	"internal/memtest": {},
	"shape":            {"tokens"},
	"hook":             {"tree", "dedup", "toolname"},
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(wd))
}

type pkgInfo struct {
	docs    int
	imports map[string]bool
	files   int
}

func scan(t *testing.T) map[string]*pkgInfo {
	root := moduleRoot(t)
	pkgs := map[string]*pkgInfo{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "scripts" || name == "examples" || name == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		p := pkgs[rel]
		if p == nil {
			p = &pkgInfo{imports: map[string]bool{}}
			pkgs[rel] = p
		}
		p.files++
		if f.Doc != nil {
			p.docs++
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if ip == module {
				p.imports[""] = true
			} else if strings.HasPrefix(ip, module+"/") {
				p.imports[strings.TrimPrefix(ip, module+"/")] = true
			}
		}
		return nil
	})
	return pkgs
}

func TestPackageDocs(t *testing.T) {
	for name, p := range scan(t) {
		if p.docs != 1 {
			t.Errorf("package %q has %d files with a package doc comment, want exactly 1", "./"+name, p.docs)
		}
	}
}

func TestLayering(t *testing.T) {
	for name, p := range scan(t) {
		allow, ok := allowed[name]
		if !ok {
			t.Errorf("package %q is not in the layering map of internal/layout: add it with the packages it may import", "./"+name)
			continue
		}
		if slices.Contains(allow, "*") {
			continue
		}
		for imp := range p.imports {
			if !slices.Contains(allow, imp) {
				t.Errorf("package %q imports %q, which the layering does not allow", "./"+name, "./"+imp)
			}
		}
	}
}

// heavyDeps are modules a program that imports only the root package (the
// library) must not link: metrics and Redis live behind their own
// packages (mcpproxy, store/redisstore).
var heavyDeps = []string{"github.com/prometheus/", "github.com/redis/"}

// TestRootDependencies checks the root package's whole dependency graph
// (go list -deps) for heavyDeps.
func TestRootDependencies(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command(goCmd, "list", "-deps", ".")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, h := range heavyDeps {
			if strings.HasPrefix(dep, h) {
				t.Errorf("the root package depends on %s", dep)
			}
		}
	}
}
