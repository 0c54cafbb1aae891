package fit

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/terse-dev/terse/tree"
)

// categoryKeys are fields whose values summarize a chunk of items.
var categoryKeys = []string{"state", "status", "type", "kind", "level", "severity", "action", "event", "resolved"}

// summarizeItems describes JSON items: the paths and +/− lines of
// diff-like items, or the counts of a category field, or nothing.
func summarizeItems(items []tree.Value) string {
	n := len(items)
	s := ""
	var paths []string
	add, del, hasStat := 0, 0, false
	for _, it := range items {
		if p := itemPath(it); p != "" && (it.Has("diff") || it.Has("patch") || it.Has("new_path") || it.Has("additions")) {
			paths = append(paths, p)
			a, d, ok := itemStat(it)
			add, del, hasStat = add+a, del+d, hasStat || ok
		}
	}
	if len(paths)*2 >= n && n > 0 {
		s = dirSummary(paths)
		if hasStat {
			s += fmt.Sprintf("; +%d/−%d", add, del)
		}
		return s
	}
	for _, k := range categoryKeys {
		counts := map[string]int{}
		seen := 0
		for _, it := range items {
			if v, ok := it.Get(k); ok && (v.Kind() == tree.KindString || v.Kind() == tree.KindBool) {
				seen++
				if v.Kind() == tree.KindBool {
					counts[fmt.Sprint(v.Bool())]++
				} else {
					t, _ := cutString(oneLine(v.Str()), 24)
					counts[t]++
				}
			}
		}
		if seen*2 < n || len(counts) == 0 {
			continue
		}
		keys := make([]string, 0, len(counts))
		for v := range counts {
			keys = append(keys, v)
		}
		slices.SortFunc(keys, func(a, b string) int {
			if c := cmp.Compare(counts[b], counts[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		var parts []string
		for j, v := range keys {
			if j == 3 {
				parts = append(parts, fmt.Sprintf("%d other", n-sumCounts(counts, keys[:3])))
				break
			}
			parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
		}
		return k + ": " + strings.Join(parts, ", ")
	}
	return s
}

func sumCounts(m map[string]int, keys []string) int {
	t := 0
	for _, k := range keys {
		t += m[k]
	}
	return t
}

// itemStat returns the added and deleted lines of a diff-like item.
func itemStat(it tree.Value) (add, del int, ok bool) {
	if a, okA := it.Get("additions"); okA {
		if d, okD := it.Get("deletions"); okD {
			x, _ := a.Int()
			y, _ := d.Int()
			return int(x), int(y), true
		}
	}
	for _, k := range []string{"diff", "patch"} {
		if v, has := it.Get(k); has && v.Kind() == tree.KindString {
			for line := range strings.SplitSeq(v.Str(), "\n") {
				switch {
				case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
				case strings.HasPrefix(line, "+"):
					add++
				case strings.HasPrefix(line, "-"):
					del++
				}
			}
			return add, del, true
		}
	}
	return 0, 0, false
}

// dirSummary groups paths by their directory (up to two segments):
// "src/app/* (3 files), README.md, 4 top-level files".
func dirSummary(paths []string) string {
	dirOf := func(p string) string {
		d := path.Dir(p)
		if segs := strings.Split(d, "/"); len(segs) > 2 {
			d = strings.Join(segs[:2], "/")
		}
		return d
	}
	groups := map[string][]string{}
	for _, p := range paths {
		d := dirOf(p)
		groups[d] = append(groups[d], p)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for j, k := range keys {
		if j == 4 {
			parts = append(parts, fmt.Sprintf("%d more dirs", len(keys)-4))
			break
		}
		if g := groups[k]; len(g) <= 2 {
			parts = append(parts, g...)
		} else if k == "." {
			parts = append(parts, fmt.Sprintf("%d top-level files", len(g)))
		} else {
			parts = append(parts, fmt.Sprintf("%s/* (%d files)", k, len(g)))
		}
	}
	return strings.Join(parts, ", ")
}

// oneLine replaces control characters (newlines, tabs) with spaces and
// trims, so that a value quoted in an index line keeps it one line.
func oneLine(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s))
}
