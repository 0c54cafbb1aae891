// Command layers prints the module's packages in layers with their imports
// among the module's own packages: layer 0 imports none of them, and each
// package sits one layer above the highest package it imports. It reads
// the output of
//
//	go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...
//
// on standard input.
//
// Usage:
//
//	go list -f '{{.ImportPath}} {{join .Imports " "}}' ./... | go run ./scripts/layers
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
)

const module = "github.com/terse-dev/terse"

func short(p string) string {
	if p == module {
		return "terse"
	}
	return strings.TrimPrefix(p, module+"/")
}

func main() {
	imports := map[string][]string{}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || (f[0] != module && !strings.HasPrefix(f[0], module+"/")) {
			continue
		}
		pkg := short(f[0])
		imports[pkg] = nil
		for _, imp := range f[1:] {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				imports[pkg] = append(imports[pkg], short(imp))
			}
		}
		sort.Strings(imports[pkg])
	}
	level := map[string]int{}
	var depth func(p string, seen map[string]bool) int
	depth = func(p string, seen map[string]bool) int {
		if l, ok := level[p]; ok {
			return l
		}
		if seen[p] {
			return 0
		}
		seen[p] = true
		l := 0
		for _, imp := range imports[p] {
			if d := depth(imp, seen) + 1; d > l {
				l = d
			}
		}
		level[p] = l
		return l
	}
	byLevel := map[int][]string{}
	top := 0
	for p := range imports {
		l := depth(p, map[string]bool{})
		byLevel[l] = append(byLevel[l], p)
		top = max(top, l)
	}
	for l := 0; l <= top; l++ {
		pkgs := byLevel[l]
		sort.Strings(pkgs)
		for _, p := range pkgs {
			if len(imports[p]) == 0 {
				fmt.Printf("L%d  %s\n", l, p)
				continue
			}
			fmt.Printf("L%d  %s → %s\n", l, p, strings.Join(imports[p], ", "))
		}
	}
}
