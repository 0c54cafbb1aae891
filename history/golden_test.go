package history

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/terse-dev/terse/tree"
)

// TestGolden runs testdata/golden/*.txtar. Each archive's comment says what
// it guards; its files are the request (input.json) and the arguments
// (args: window, and optionally keep, max-args, target), and the outputs a model
// or a caller reads: the trimmed request (want.json, indented), the state
// (state.json) and a report summary (report). Run with -update to rewrite
// the outputs.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.txtar")
	mustTB(t, err)
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			mustTB(t, err)
			get := func(name string) []byte {
				for _, f := range ar.Files {
					if f.Name == name {
						return f.Data
					}
				}
				return nil
			}
			r, err := Decode(get("input.json"), 0)
			mustTB(t, err)
			window, opts := 0, &Options{Tools: r.Tools}
			for _, line := range strings.Split(strings.TrimSpace(string(get("args"))), "\n") {
				k, v, _ := strings.Cut(line, "=")
				v = strings.TrimSpace(v)
				if strings.TrimSpace(k) == "target" {
					opts.Target, err = strconv.ParseFloat(v, 64)
					mustTB(t, err)
					continue
				}
				n, err := strconv.Atoi(v)
				mustTB(t, err)
				switch strings.TrimSpace(k) {
				case "window":
					window = n
				case "keep":
					opts.KeepAssistant = n
				case "max-args":
					opts.MaxArgs = n
				}
			}
			out, st, rep := Reduce(r.Messages, window, State{}, opts)
			r.Messages = out
			v, err := r.Value()
			mustTB(t, err)
			got := map[string][]byte{
				"want.json":  append(tree.AppendIndent(nil, v, "  "), '\n'),
				"state.json": append(st.AppendJSON(nil), '\n'),
				"report": fmt.Appendf(nil, "tokens %d -> %d (threshold %d, target %d)\ntrimmed %d, dropped %d, args %d, thinking %d\nboundary %d, dropped up to %d\n",
					rep.TokensBefore, rep.TokensAfter, rep.Threshold, rep.Target, rep.Trimmed, rep.Dropped, rep.ArgsTrimmed, rep.ThinkingDropped, rep.Boundary, rep.DropBoundary),
			}
			if *update {
				var files []txtar.File
				for _, f := range ar.Files {
					if _, ok := got[f.Name]; !ok {
						files = append(files, f)
					}
				}
				for _, name := range []string{"want.json", "state.json", "report"} {
					files = append(files, txtar.File{Name: name, Data: got[name]})
				}
				ar.Files = files
				mustTB(t, os.WriteFile(file, txtar.Format(ar), 0o644))
				return
			}
			for name, data := range got {
				if want := get(name); !bytes.Equal(data, want) {
					t.Errorf("%s differs (run with -update to accept):\ngot:\n%s\nwant:\n%s", name, data, want)
				}
			}
		})
	}
}
