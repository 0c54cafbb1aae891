package fit

import (
	"math"
	"path"
	"strings"

	"github.com/terse-dev/terse/toolname"
	"github.com/terse-dev/terse/tree"
)

// Strategy names. A strategy assigns each item a value in (0, 1] (boosted
// log lines get more); the solver maximizes the total value kept.
const (
	StrategyDefault          = "default"           // every item 1.0
	StrategyElementCount     = "element_count"     // position: first 1.0 → last 0.3
	StrategyCascading        = "cascading"         // newest first: β^age, β = 0.95
	StrategySizeProportional = "size_proportional" // diff files weighted by file type
	StrategyThreadLevel      = "thread_level"      // unresolved 1.0, resolved 0.3
	StrategyHeadTail         = "head_tail"         // logs: head 30 %, tail 70 %, errors boosted
)

// Strategies lists the strategy names [Resolve] and Options.Strategy accept.
var Strategies = []string{StrategyDefault, StrategyElementCount, StrategyCascading, StrategySizeProportional, StrategyThreadLevel, StrategyHeadTail}

// builtinTools maps well-known tool names to their default strategy.
var builtinTools = map[string]string{
	"get_issues":                    StrategyElementCount,
	"list_issues":                   StrategyElementCount,
	"search_issues":                 StrategyElementCount,
	"get_merge_requests":            StrategyElementCount,
	"list_merge_requests":           StrategyElementCount,
	"list_pull_requests":            StrategyElementCount,
	"get_pull_requests":             StrategyElementCount,
	"get_issue_comments":            StrategyCascading,
	"list_issue_comments":           StrategyCascading,
	"get_comments":                  StrategyCascading,
	"get_merge_request_diffs":       StrategySizeProportional,
	"get_pull_request_files":        StrategySizeProportional,
	"get_pull_request_diff":         StrategySizeProportional,
	"get_diff":                      StrategySizeProportional,
	"get_merge_request_discussions": StrategyThreadLevel,
	"get_pull_request_reviews":      StrategyThreadLevel,
	"get_discussions":               StrategyThreadLevel,
	"get_job_logs":                  StrategyHeadTail,
	"get_logs":                      StrategyHeadTail,
	"fetch_pod_logs":                StrategyHeadTail,
	"kubectl_logs":                  StrategyHeadTail,
	"get_pipeline":                  StrategyDefault,
	"get_users":                     StrategyDefault,
}

// Resolve returns the strategy for tool and where it came from: "config"
// (a key of overrides equal to the tool, else the first in sorted order
// that matches it as a glob, path.Match syntax), "builtin" (built-in default for the tool
// name), the same two with " (prefix stripped)" when the name matched only
// after removing an MCP server prefix (toolname.Tool)
// (server__get_issues → get_issues), or "uniform" with [StrategyDefault].
func Resolve(tool string, overrides map[string]string) (name, source string) {
	if tool != "" {
		if s, ok := override(overrides, tool); ok {
			return s, "config"
		}
		if s, ok := builtinTools[tool]; ok {
			return s, "builtin"
		}
		if base := toolname.Tool(tool); base != tool {
			if s, ok := override(overrides, base); ok {
				return s, "config (prefix stripped)"
			}
			if s, ok := builtinTools[base]; ok {
				return s, "builtin (prefix stripped)"
			}
		}
	}
	return StrategyDefault, "uniform"
}

// override returns the strategy overrides give tool: its own key's, else
// that of the first glob key (in sorted order) that matches it.
func override(overrides map[string]string, tool string) (string, bool) {
	if s, ok := overrides[tool]; ok {
		return s, true
	}
	first, found := "", false
	for k := range overrides {
		if ok, _ := path.Match(k, tool); ok && (!found || k < first) {
			first, found = k, true
		}
	}
	return overrides[first], found
}

func knownStrategy(s string) bool {
	for _, k := range Strategies {
		if k == s {
			return true
		}
	}
	return false
}

// positionValue is element_count: 1.0 for the first of n items, falling
// linearly to exactly 0.3 for the last.
func positionValue(i, n int) float64 {
	if n <= 1 {
		return 1
	}
	return 1 - 0.7*float64(i)/float64(n-1)
}

// cascadeBeta is the per-step decay of the cascading strategy.
const cascadeBeta = 0.95

// cascadeValues gives the newest item 1.0 and each older one β times the
// next newer. Age comes from the items' primary timestamp when every item
// has one (ISO 8601 strings compare in time order); otherwise the last item
// is the newest.
func cascadeValues(items []tree.Value) []float64 {
	n := len(items)
	vals := make([]float64, n)
	stamps := make([]string, n)
	ok := n > 0
	for i, it := range items {
		if stamps[i], _ = primaryTimestamp(it); stamps[i] == "" {
			ok = false
			break
		}
	}
	for i := range items {
		rank := n - 1 - i // items newer than i, by position
		if ok {
			rank = 0
			for j := range items {
				if stamps[j] > stamps[i] || stamps[j] == stamps[i] && j > i {
					rank++
				}
			}
		}
		vals[i] = math.Pow(cascadeBeta, float64(rank))
	}
	return vals
}

// PathWeight is the size_proportional weight of a changed file by type:
// lock files 0.05, minified or generated bundles 0.10, migrations and
// schemas 0.60, tests 0.70, everything else 1.00. It looks at path
// segments and the file name, so "latest.go" is not a test.
func PathWeight(p string) float64 {
	p = strings.ToLower(strings.TrimSpace(p))
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, ".lock") || base == "go.sum" || base == "package-lock.json" ||
		base == "pnpm-lock.yaml" || base == "yarn.lock" || base == "npm-shrinkwrap.json" || base == "composer.lock":
		return 0.05
	case strings.Contains(base, ".min.") || strings.HasSuffix(base, ".map") || strings.HasSuffix(base, ".pb.go") ||
		strings.HasSuffix(base, "_generated.go"):
		return 0.10
	}
	segs := strings.Split(p, "/")
	for _, s := range segs[:len(segs)-1] {
		switch s {
		case "migrations", "migration", "migrate", "schema", "schemas":
			return 0.60
		}
	}
	if strings.Contains(base, "migration") || strings.HasPrefix(base, "schema.") || strings.Contains(base, ".schema.") {
		return 0.60
	}
	for _, s := range segs[:len(segs)-1] {
		switch s {
		case "test", "tests", "__tests__", "spec", "specs", "testdata", "e2e":
			return 0.70
		}
	}
	stem := strings.TrimSuffix(base, path.Ext(base))
	if strings.HasSuffix(stem, "_test") || strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, ".test") ||
		strings.HasSuffix(stem, ".spec") || strings.HasSuffix(stem, "_spec") || strings.HasSuffix(stem, "test") && strings.HasPrefix(stem, "test") {
		return 0.70
	}
	return 1.00
}

// itemPath returns the file path of a diff-like JSON item.
func itemPath(v tree.Value) string {
	for _, k := range []string{"new_path", "filename", "path", "file", "old_path", "name"} {
		if x, ok := v.Get(k); ok && x.Kind() == tree.KindString {
			return x.Str()
		}
	}
	return ""
}

// threadResolved reports whether a discussion/thread item is resolved.
func threadResolved(v tree.Value) bool {
	for _, k := range []string{"resolved", "is_resolved", "isResolved"} {
		if x, ok := v.Get(k); ok && x.Kind() == tree.KindBool {
			return x.Bool()
		}
	}
	if x, ok := v.Get("state"); ok && x.Kind() == tree.KindString {
		s := strings.ToLower(x.Str())
		return s == "resolved" || s == "outdated"
	}
	// GitLab discussions: resolved when every resolvable note is.
	for _, k := range []string{"notes", "comments"} {
		notes, ok := v.Get(k)
		if !ok || notes.Kind() != tree.KindArray {
			continue
		}
		resolvable := 0
		for _, n := range notes.Items() {
			if r, ok := n.Get("resolvable"); ok && r.Kind() == tree.KindBool && !r.Bool() {
				continue
			}
			if r, ok := n.Get("resolved"); ok && r.Kind() == tree.KindBool {
				if !r.Bool() {
					return false
				}
				resolvable++
			}
		}
		return resolvable > 0
	}
	return false
}

// jsonValues assigns values to JSON items under a strategy.
func jsonValues(strategy string, items []tree.Value) []float64 {
	n := len(items)
	vals := make([]float64, n)
	switch strategy {
	case StrategyElementCount:
		for i := range vals {
			vals[i] = positionValue(i, n)
		}
	case StrategyCascading:
		return cascadeValues(items)
	case StrategySizeProportional:
		for i, it := range items {
			vals[i] = PathWeight(itemPath(it))
		}
	case StrategyThreadLevel:
		for i, it := range items {
			vals[i] = 1
			if threadResolved(it) {
				vals[i] = 0.3
			}
		}
	case StrategyHeadTail:
		for i := range vals {
			vals[i] = headTailValue(i, n)
		}
	default:
		for i := range vals {
			vals[i] = 1
		}
	}
	return vals
}

// headTailValue shapes values so that cutting at any value threshold keeps
// a head and a tail in proportion 30:70.
func headTailValue(i, n int) float64 {
	if n <= 1 {
		return 1
	}
	head := 1 - float64(i)/(0.3*float64(n))
	tail := 1 - float64(n-1-i)/(0.7*float64(n))
	return 0.3 + 0.7*max(head, tail, 0)
}

// errorMarkers are the log patterns the head_tail strategy boosts.
var errorMarkers = []string{"ERROR", "FATAL", "Exception", "panic", "Traceback", "FAIL"}

func isErrorLine(s string) bool {
	for _, m := range errorMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}
