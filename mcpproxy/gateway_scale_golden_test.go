package mcpproxy

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/terse-dev/terse/tree"
)

// TestGoldenRefusals pins the texts a model reads when the gateway
// refuses a chunk fetch (testdata/refusals.txtar).
func TestGoldenRefusals(t *testing.T) {
	const file = "testdata/refusals.txtar"
	ctx := context.Background()
	g, err := NewGateway(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	const h = "c_0123456789abcdef"
	g.scale.state.Own(ctx, "team-a:s1", h)
	args := func(ref string) tree.Value {
		return tree.Object(tree.Member{Key: ParamChunk, Value: tree.String(ref)})
	}
	text := func(v *tree.Value) string {
		if v == nil {
			return "(served)\n"
		}
		c, _ := v.Get("content")
		s, _ := c.Index(0).Get("text")
		return s.Str() + "\n"
	}
	got := map[string]string{
		"own":          text(g.checkChunk(ctx, identity{who: Scope{Tenant: "team-a", Session: "s1"}}, args(h+".2"))),
		"other_owner":  text(g.checkChunk(ctx, identity{who: Scope{Tenant: "team-b", Session: "s1"}}, args(h+".2"))),
		"unknown":      text(g.checkChunk(ctx, identity{who: Scope{Tenant: "team-a", Session: "s1"}}, args("c_fedcba9876543210.1"))),
		"not_a_handle": text(g.checkChunk(ctx, identity{who: Scope{Tenant: "team-a", Session: "s1"}}, args("r1.2"))),
	}
	g.SetState(downState{})
	got["state_down"] = text(g.checkChunk(ctx, identity{who: Scope{Tenant: "team-a", Session: "s1"}}, args(h+".2")))
	names := []string{"own", "other_owner", "unknown", "not_a_handle", "state_down"}
	if *update {
		ar := &txtar.Archive{Comment: []byte("What a model reads when the gateway refuses a _chunk fetch (TestGoldenRefusals).\n")}
		for _, n := range names {
			ar.Files = append(ar.Files, txtar.File{Name: n, Data: []byte(got[n])})
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range ar.Files {
		want[f.Name] = string(f.Data)
	}
	for _, n := range names {
		if got[n] != want[n] {
			t.Errorf("%s: got\n%s\nwant\n%s(run go test -run GoldenRefusals -update)", n, strings.TrimSpace(got[n]), want[n])
		}
	}
}
