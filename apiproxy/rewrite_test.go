package apiproxy

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tree"
)

var update = flag.Bool("update", false, "rewrite golden files")

// convo builds Anthropic requests turn by turn.
type convo struct {
	msgs []tree.Value
	n    int
}

func obj(kv ...any) tree.Value {
	var ms []tree.Member
	for i := 0; i < len(kv); i += 2 {
		var v tree.Value
		switch x := kv[i+1].(type) {
		case string:
			v = tree.String(x)
		case tree.Value:
			v = x
		case []tree.Value:
			v = tree.Array(x...)
		case bool:
			v = tree.Bool(x)
		}
		ms = append(ms, tree.Member{Key: kv[i].(string), Value: v})
	}
	return tree.Object(ms...)
}

func (c *convo) user(text string) { c.msgs = append(c.msgs, obj("role", "user", "content", text)) }

// call adds an assistant tool call and the user message with its result.
func (c *convo) call(name, args, result string) string {
	c.n++
	id := fmt.Sprintf("toolu_%02d", c.n)
	a, err := tree.ParseString(args)
	if err != nil {
		panic(err)
	}
	c.msgs = append(c.msgs,
		obj("role", "assistant", "content", []tree.Value{
			obj("type", "text", "text", "Looking at it."),
			obj("type", "tool_use", "id", id, "name", name, "input", a)}),
		obj("role", "user", "content", []tree.Value{obj("type", "tool_result", "tool_use_id", id, "content", result)}))
	return id
}

func (c *convo) request() []byte {
	return tree.AppendJSON(nil, obj("model", "claude-sonnet-4-5", "system", "You are a coding agent.", "messages", c.msgs))
}

func fileText(name string, lines int) string {
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "%6d→func %s%d() { return compute(%d) } // line of %s\n", i, name, i, i*7, name)
	}
	return b.String()
}

// TestInBandTexts pins what the model reads in place of results: a
// repeat, line references, a stale read, a trimmed result, and a JSON
// re-encoding.
func TestInBandTexts(t *testing.T) {
	var c convo
	c.user("Fix the bug in a.go.")
	c.call("Read", `{"file_path":"/src/a.go"}`, fileText("a", 60))
	c.call("Bash", `{"command":"gh api repos/x/y/issues"}`, `[{"number": 1, "title": "crash on start", "state": "open"}, {"number": 2, "title": "slow build", "state": "open"}, {"number": 3, "title": "docs typo", "state": "closed"}]`)
	c.call("Edit", `{"file_path":"/src/a.go","old_string":"compute(7)","new_string":"compute(8)"}`, "The file /src/a.go has been updated.")
	c.call("Read", `{"file_path":"/src/b.go"}`, fileText("b", 20))
	c.call("Read", `{"file_path":"/src/b.go"}`, fileText("b", 20))
	rw := NewRewriter(Options{Window: 200_000})
	roomy := rw.Rewrite(c.request(), history.Anthropic)

	// A tight window: trimming starts, the boundary moves, the stale read
	// after it is declared.
	var d convo
	d.user("Fix the bug in a.go.")
	for i := 0; i < 30; i++ {
		d.call("Grep", fmt.Sprintf(`{"pattern":"p%d"}`, i), fileText(fmt.Sprintf("g%d_", i), 40))
	}
	d.call("Read", `{"file_path":"/src/a.go"}`, fileText("a", 60))
	d.call("Edit", `{"file_path":"/src/a.go","old_string":"compute(7)","new_string":"compute(8)"}`, "The file /src/a.go has been updated.")
	d.user("Now run the tests.")
	tight := NewRewriter(Options{Window: 20_000, MinTarget: 0.5, NoEdit: true}).Rewrite(d.request(), history.Anthropic)

	// A batch of edits: a write's payloads applied, old bulky results
	// (one read-only, one stored under a handle), a stale read.
	var e convo
	e.user("Port a.go.")
	e.call("Read", `{"file_path":"/src/a.go"}`, fileText("a", 60))
	e.call("Write", `{"file_path":"/src/a.rs","content":`+string(tree.AppendString(nil, fileText("rs", 30)))+`}`, "File created successfully at: /src/a.rs")
	e.call("Edit", `{"file_path":"/src/a.go","old_string":`+string(tree.AppendString(nil, fileText("x", 3)))+`,"new_string":"// moved to a.rs"}`, "The file /src/a.go has been updated.")
	e.call("Bash", `{"command":"cargo build"}`, fileText("build", 40))
	for i := 0; i < 3; i++ {
		e.call("Bash", fmt.Sprintf(`{"command":"echo %d"}`, i), "ok")
	}
	batch := NewRewriter(Options{Window: 200_000, EditAge: 3, ChunkStore: &store.Mem{}}).Rewrite(e.request(), history.Anthropic)
	if batch.Batch == "" {
		t.Fatal("no batch of edits")
	}

	// A file read again after an edit: its unchanged lines are line
	// references to the first read.
	var l convo
	l.user("Fix a.go.")
	l.call("Read", `{"file_path":"/src/a.go"}`, fileText("a", 40))
	l.call("Edit", `{"file_path":"/src/a.go","old_string":"compute(140)","new_string":"compute(141)"}`, "The file /src/a.go has been updated.")
	l.call("Read", `{"file_path":"/src/a.go"}`, strings.Replace(fileText("a", 40), "compute(140)", "compute(141)", 1))
	lined := NewRewriter(Options{Window: 200_000}).Rewrite(l.request(), history.Anthropic)

	var files []txtar.File
	add := func(name string, res Result) {
		var b bytes.Buffer
		for _, e := range res.Edits {
			fmt.Fprintf(&b, "%s %s (%s):\n%s\n\n", e.Source, e.CallID, e.Tool, e.After)
		}
		files = append(files, txtar.File{Name: name, Data: b.Bytes()})
	}
	add("roomy-edits", roomy)
	add("tight-edits", tight)
	add("batch-edits", batch)
	add("line-refs", lined)
	var trimmed []string
	v, _ := tree.Parse(tight.Body)
	for _, m := range get(v, "messages").Items() {
		for _, b := range get(m, "content").Items() {
			if get(b, "type").Str() == "tool_result" {
				if s := get(b, "content").Str(); strings.HasPrefix(s, "> [trimmed") {
					trimmed = append(trimmed, s)
				}
			}
		}
	}
	if len(trimmed) == 0 {
		t.Fatal("nothing trimmed with a 20,000-token window")
	}
	files = append(files, txtar.File{Name: "trimmed-first", Data: []byte(trimmed[0] + "\n")})
	// With the default floor the oldest exchanges are dropped whole; the
	// first result sent declares them.
	dropped := NewRewriter(Options{Window: 12_000, EditAge: 12, EditBulky: 2048}).Rewrite(d.request(), history.Anthropic)
	if dropped.Report.Dropped == 0 {
		t.Fatal("nothing dropped")
	}
	dv, _ := tree.Parse(dropped.Body)
	note := ""
	for _, m := range get(dv, "messages").Items() {
		for _, b := range get(m, "content").Items() {
			if s := get(b, "content").Str(); note == "" && get(b, "type").Str() == "tool_result" {
				note, _, _ = strings.Cut(s, "\n")
			}
		}
	}
	files = append(files, txtar.File{Name: "dropped", Data: []byte(note + "\n")})
	golden(t, "testdata/inband.txtar", &txtar.Archive{
		Comment: []byte("What the model reads in place of tool results (go test -run TestInBandTexts -update rewrites this).\n"),
		Files:   files,
	})
	sources := map[Source]bool{}
	for _, e := range append(roomy.Edits, tight.Edits...) {
		sources[e.Source] = true
	}
	for _, e := range batch.Edits {
		sources[e.Source] = true
	}
	for _, s := range []Source{SourceRepeat, SourceStale, SourceEncoding, SourceApplied, SourceElided} {
		if !sources[s] {
			t.Errorf("no %s edit", s)
		}
	}
}

func golden(t *testing.T, path string, a *txtar.Archive) {
	t.Helper()
	got := txtar.Format(a)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to see):\n%s", path, got)
	}
}
