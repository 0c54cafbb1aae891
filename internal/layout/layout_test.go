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
	"inband":           {"internal/lazyre"},
	"toolname":         {},
	"tokens":           {},
	"toon":             {"tree"},
	"filter":           {"tree", "tokens", "inband"},
	"render":           {"tree", "tokens", "toon", "internal/lazyre"},
	"dedup":            {"tree", "inband", "internal/lru", "toolname"},
	"store":            {"internal/lru"},
	"store/redisstore": {"store", "dedup"},
	"dedup/deduptest":  {"dedup"},
	"store/storetest":  {"store", "internal/corpus"},
	"internal/scale":   {}, // tests only: the gateway at scale (TERSE_SCALE)
	"fit":              {"tree", "tokens", "toon", "render", "store", "toolname", "inband"},
	"history":          {"tree", "tokens"},
	"":                 {"tree", "tokens", "toon", "filter", "render", "dedup", "store", "fit", "shape", "toolname", "inband"},
	"config":           {"", "shape", "tree", "tokens", "toon", "filter", "render", "dedup", "store", "fit", "history", "toolname"},
	"telemetry":        {"", "tokens", "toolname"},
	"meter":            {"", "telemetry"},
	"meter/prom":       {"meter"},
	"mcpproxy":         {"", "tree", "tokens", "toon", "filter", "render", "dedup", "store", "fit", "config", "telemetry", "profile", "toolname", "inband", "internal/lru", "meter", "meter/prom"},
	"eval":             {"", "tree", "tokens", "toon", "render", "fit", "store", "inband", "shape"},
	"tune":             {"", "tree", "tokens", "dedup", "config", "telemetry", "profile"},
	"profile":          {"", "config", "tokens", "toolname"},
	"fit/readtest":     {"tree", "inband"},
	"apiproxy":         {"", "tree", "tokens", "history", "store", "fit", "telemetry", "shape", "hook", "toolname", "inband", "meter", "meter/prom", "dedup"},
	"cmd/terse":        {"*"},
	"internal/corpus":  {},
	"internal/layout":  {},
	"internal/memtest": {},
	"internal/fixture": {}, // tests only: inputs the tests of several packages share
	"internal/lazyre":  {},
	"internal/lru":     {},
	"internal/replay":  {"internal/corpus", "tune", "inband", "dedup", "hook", "tree", "shape"}, // tests only: the corpus transcripts replayed
	"shape":            {"tokens", "toolname", "inband", "internal/lazyre"},
	"hook":             {"tree", "dedup", "toolname", "inband"},
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

// lightPackages are the library's packages that a program may import
// without the weight of the servers: the root and the stages it runs,
// and config.
var lightPackages = []string{"", "tree", "tokens", "toon", "render", "fit", "dedup", "history", "filter", "config"}

// forbiddenDeps are what the light packages must not link: an HTTP server
// (net/http), Redis and Prometheus (behind mcpproxy, apiproxy and
// store/redisstore). A name ending in "/" is a module prefix.
var forbiddenDeps = []string{"net/http", "github.com/redis/", "github.com/prometheus/"}

// TestForbiddenDependencies checks the whole dependency graph (go list
// -deps) of each light package for forbidden dependencies: a program that
// imports only these packages does not link an HTTP server, Redis or
// Prometheus.
func TestForbiddenDependencies(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	args := []string{"list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}
	for _, p := range lightPackages {
		args = append(args, "./"+p)
	}
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(lightPackages) {
		t.Fatalf("go list gave %d packages, want %d", len(lines), len(lightPackages))
	}
	for _, l := range lines {
		pkg, deps, _ := strings.Cut(l, " ")
		for _, dep := range strings.Fields(deps) {
			for _, f := range forbiddenDeps {
				if dep == f || strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
