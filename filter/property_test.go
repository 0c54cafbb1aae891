package filter

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/terse-dev/terse/tree"
)

var propKeys = []string{"id", "name", "user", "node_id", "html_url", "tags", "x"}

func genValue(depth int) *rapid.Generator[tree.Value] {
	return rapid.Custom(func(t *rapid.T) tree.Value {
		kind := rapid.IntRange(0, 6).Draw(t, "kind")
		if depth <= 0 && kind >= 5 {
			kind = 4
		}
		switch kind {
		case 0:
			return tree.Null()
		case 1:
			return tree.Bool(rapid.Bool().Draw(t, "b"))
		case 2:
			return tree.Int(rapid.Int64Range(-5, 5).Draw(t, "n"))
		case 3:
			return tree.String("")
		case 4:
			return tree.String(rapid.StringMatching(`[a-z<&"]{1,4}`).Draw(t, "s"))
		case 5:
			n := rapid.IntRange(0, 3).Draw(t, "len")
			items := make([]tree.Value, n)
			for i := range items {
				items[i] = genValue(depth-1).Draw(t, "item")
			}
			return tree.Array(items...)
		default:
			return genObject(depth-1).Draw(t, "obj")
		}
	})
}

func genObject(depth int) *rapid.Generator[tree.Value] {
	return rapid.Custom(func(t *rapid.T) tree.Value {
		keys := rapid.SliceOfNDistinct(rapid.SampledFrom(propKeys), 0, 5, rapid.ID[string]).Draw(t, "keys")
		mems := make([]tree.Member, len(keys))
		for i, k := range keys {
			mems[i] = tree.Member{Key: k, Value: genValue(depth).Draw(t, k)}
		}
		return tree.Object(mems...)
	})
}

// walkMembers calls fn for every object member below v.
func walkMembers(v tree.Value, fn func(tree.Member)) {
	switch v.Kind() {
	case tree.KindArray:
		for _, x := range v.Items() {
			walkMembers(x, fn)
		}
	case tree.KindObject:
		for _, m := range v.Members() {
			fn(m)
			walkMembers(m.Value, fn)
		}
	}
}

// TestProperties checks, on random lists of objects, what every rule
// promises: determinism, sizes that match the output, no nulls or empties
// left when dropped, no excluded name left, select output keys only, and
// max_items declared.
func TestProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		items := rapid.SliceOfN(genObject(2), 0, 6).Draw(t, "items")
		in := tree.Array(items...)
		spec := Spec{
			DropNulls: rapid.Bool().Draw(t, "drop_nulls"),
			DropEmpty: rapid.Bool().Draw(t, "drop_empty"),
			MaxItems:  rapid.IntRange(0, 4).Draw(t, "max_items"),
			Exclude:   rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"node_id", "*_url", "user.name"}), 0, 2, rapid.ID[string]).Draw(t, "exclude"),
		}
		outs := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"id", "name", "user.id", "tags[*].id", "tags[0]"}), 0, 3, rapid.ID[string]).Draw(t, "select")
		for i, p := range outs {
			spec.Select = append(spec.Select, Field{Out: "o" + strconv.Itoa(i), Path: p})
		}
		r, err := Compile(spec)
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		res := r.Apply(in, nil)
		out := res.Append(nil)
		if again := r.Apply(in, nil).Append(nil); string(again) != string(out) {
			t.Fatalf("nondeterministic:\n%s\n%s", out, again)
		}
		if res.Report.ResultBytes != len(out) || res.Report.OriginalBytes != len(tree.AppendJSON(nil, in)) {
			t.Fatalf("sizes %d/%d, want %d/%d", res.Report.OriginalBytes, res.Report.ResultBytes, len(tree.AppendJSON(nil, in)), len(out))
		}
		if res.Report.Err != nil {
			if _, ok := res.Report.Err.(*MissError); !ok || !tree.Equal(res.Value, in) {
				t.Fatalf("error %v, or payload changed on error", res.Report.Err)
			}
			return
		}
		got := res.Value.Items()
		want := len(items)
		if spec.MaxItems > 0 && spec.MaxItems < want {
			want = spec.MaxItems
			if !strings.Contains(res.Note, "showing "+strconv.Itoa(want)+" of "+strconv.Itoa(len(items))+" items") {
				t.Fatalf("truncation not declared: %q", res.Note)
			}
		}
		if len(got) != want {
			t.Fatalf("%d items, want %d", len(got), want)
		}
		for _, it := range got {
			if len(spec.Select) > 0 {
				for _, m := range it.Members() {
					if !strings.HasPrefix(m.Key, "o") {
						t.Fatalf("output key %q not from select", m.Key)
					}
				}
			}
			walkMembers(it, func(m tree.Member) {
				if spec.DropNulls && m.Value.Kind() == tree.KindNull {
					t.Fatalf("null %q left with drop_nulls: %s", m.Key, it)
				}
				if spec.DropEmpty && isEmpty(m.Value) {
					t.Fatalf("empty %q left with drop_empty: %s", m.Key, it)
				}
				if slices.Contains(spec.Exclude, "node_id") && m.Key == "node_id" ||
					slices.Contains(spec.Exclude, "*_url") && strings.HasSuffix(m.Key, "_url") {
					t.Fatalf("excluded %q left: %s", m.Key, it)
				}
			})
		}
	})
}
