// Command sizes lists the non-test functions of at least -func lines and the
// non-test files of more than -file lines in the module, longest first. It
// is the yardstick for keeping the core in short, named steps.
//
// Usage:
//
//	go run ./scripts/sizes [-func 100] [-file 1000] [DIR]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type entry struct {
	lines int
	name  string
}

func main() {
	funcMin := flag.Int("func", 100, "list functions of at least this many lines")
	fileMin := flag.Int("file", 1000, "list files of more than this many lines")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	var funcs, files []entry
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if n := fset.File(f.Pos()).LineCount(); n > *fileMin {
			files = append(files, entry{n, path})
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start := fset.Position(fd.Pos()).Line
			n := fset.Position(fd.End()).Line - start + 1
			if n < *funcMin {
				continue
			}
			fname := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				fname = recvName(fd.Recv.List[0].Type) + "." + fname
			}
			funcs = append(funcs, entry{n, fmt.Sprintf("%s:%d %s", path, start, fname)})
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, list := range [][]entry{funcs, files} {
		sort.Slice(list, func(i, j int) bool {
			if list[i].lines != list[j].lines {
				return list[i].lines > list[j].lines
			}
			return list[i].name < list[j].name
		})
	}
	fmt.Printf("functions of %d lines or more: %d\n", *funcMin, len(funcs))
	for _, e := range funcs {
		fmt.Printf("%5d  %s\n", e.lines, e.name)
	}
	fmt.Printf("files over %d lines: %d\n", *fileMin, len(files))
	for _, e := range files {
		fmt.Printf("%5d  %s\n", e.lines, e.name)
	}
}

func recvName(x ast.Expr) string {
	switch t := x.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}
