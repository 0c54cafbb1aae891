package eval

import (
	"context"
	"reflect"
	"testing"

	"github.com/terse-dev/terse/tree"
)

func mustParse(t testing.TB, s string) tree.Value {
	t.Helper()
	v, err := tree.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestGenerateDeterministic(t *testing.T) {
	for _, d := range testdataDocs(t) {
		a := Generate(d, 12, 5)
		b := Generate(d, 12, 5)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs with the same seed differ", d.Name)
		}
		c := Generate(d, 12, 6)
		if reflect.DeepEqual(a, c) {
			t.Errorf("%s: seeds 5 and 6 give the same questions", d.Name)
		}
		seen := map[string]bool{}
		for _, q := range a {
			if seen[q.Text] {
				t.Errorf("%s: question asked twice: %s", d.Name, q.Text)
			}
			seen[q.Text] = true
			if got, err := q.Query.Eval(d.Value); err != nil || got != q.Answer {
				t.Errorf("%s: %s: Eval = %q, %v; gold %q", d.Name, q.Text, got, err, q.Answer)
			}
		}
	}
}

func TestGenerateKeepsOnlyUnambiguous(t *testing.T) {
	// "id" repeats, so no item can be named by it; "name" is unique but
	// one is too long to quote; "title" identifies every item.
	doc := Document{Name: "d", Value: mustParse(t, `{"items":[
		{"id":1,"title":"a","state":"open","n":null},
		{"id":1,"title":"b","state":"closed","n":""},
		{"id":2,"title":"c","state":"open"}]}`)}
	qs := Generate(doc, 100, 1)
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
		if q.Query.Key != "" && q.Query.Key != "title" {
			t.Errorf("keyed by %q, which is not unique: %s", q.Query.Key, q.Text)
		}
	}
	for _, k := range []string{KindLookup, KindCount, KindFilter, KindPresence, KindPosition} {
		if kinds[k] == 0 {
			t.Errorf("no %s question; got %v", k, kinds)
		}
	}
	// Duplicate keys in an object make its fields unaskable.
	dup := Document{Name: "dup", Value: mustParse(t, `{"a":1,"a":2}`)}
	if qs := Generate(dup, 10, 1); len(qs) != 0 {
		t.Errorf("questions about an object with duplicate keys: %+v", qs)
	}
}

func TestQueryEval(t *testing.T) {
	doc := mustParse(t, `{"total":2,"x":{"y":"z"},"items":[{"k":"a","v":1.50,"n":null,"e":""},{"k":"b","v":true}]}`)
	for _, c := range []struct {
		q    Query
		want string
		err  error
	}{
		{Query{Op: OpGet, Field: []string{"total"}}, "2", nil},
		{Query{Op: OpGet, Field: []string{"x", "y"}}, "z", nil},
		{Query{Op: OpGet, Field: []string{"x"}}, "", errNotScalar},
		{Query{Op: OpGet, Array: "/items", HasArray: true, Key: "k", KeyValue: "a", Field: []string{"v"}}, "1.50", nil},
		{Query{Op: OpGet, Array: "/items", HasArray: true, Key: "k", KeyValue: "c", Field: []string{"v"}}, "", errNotFound},
		{Query{Op: OpGet, Array: "/items", HasArray: true, Pos: "last", Field: []string{"v"}}, "true", nil},
		{Query{Op: OpPresence, Array: "/items", HasArray: true, Key: "k", KeyValue: "a", Field: []string{"n"}}, PresenceNull, nil},
		{Query{Op: OpPresence, Array: "/items", HasArray: true, Key: "k", KeyValue: "a", Field: []string{"e"}}, PresenceEmpty, nil},
		{Query{Op: OpPresence, Array: "/items", HasArray: true, Key: "k", KeyValue: "b", Field: []string{"n"}}, PresenceAbsent, nil},
		{Query{Op: OpCount, Array: "/items", HasArray: true}, "2", nil},
		{Query{Op: OpCount, Array: "/items", HasArray: true, Field: []string{"v"}, Value: "true"}, "1", nil},
		{Query{Op: OpCount, Array: "/nope", HasArray: true}, "", errNotFound},
	} {
		got, err := c.q.Eval(doc)
		if got != c.want || err != c.err {
			t.Errorf("%+v: Eval = %q, %v; want %q, %v", c.q, got, err, c.want, c.err)
		}
	}
}

func TestExpectedPartial(t *testing.T) {
	orig := mustParse(t, `{"items":[{"k":"a","u":"https://x/a","n":null},{"k":"b","u":"https://x/b"}]}`)
	// What a fitted text shows: item b left out, item a's URL dropped.
	shown := mustParse(t, `{"items":[{"k":"a","n":null}]}`)
	e := &Encoded{Partial: true, Shown: shown}
	q := func(qq Query) *Question {
		ans, err := qq.Eval(orig)
		if err != nil {
			t.Fatal(err)
		}
		return &Question{Answer: ans, Query: &qq}
	}
	items := Query{Array: "/items", HasArray: true, Key: "k"}
	for _, c := range []struct {
		name string
		q    *Question
		gold string
		also []string
	}{
		{"item left out", q(with(items, OpGet, "b", "u")), NotShown, nil},
		{"field dropped", q(with(items, OpGet, "a", "u")), NotShown, nil},
		{"field shown", q(with(items, OpGet, "a", "k")), "a", nil},
		{"null shown", q(with(items, OpPresence, "a", "n")), PresenceNull, nil},
		{"absent or dropped", q(with(items, OpPresence, "b", "n")), NotShown, nil},
		{"count", q(Query{Op: OpCount, Array: "/items", HasArray: true}), NotShown, []string{"2"}},
	} {
		gold, also := Expected(c.q, e)
		if gold != c.gold || !reflect.DeepEqual(also, c.also) {
			t.Errorf("%s: Expected = %q %q, want %q %q", c.name, gold, also, c.gold, c.also)
		}
	}
	full := &Encoded{}
	if gold, _ := Expected(q(with(items, OpGet, "b", "u")), full); gold != "https://x/b" {
		t.Errorf("complete text: gold %q", gold)
	}
}

func with(q Query, op, key, field string) Query {
	q.Op, q.KeyValue, q.Field = op, key, []string{field}
	return q
}

func TestParseEncoding(t *testing.T) {
	for _, s := range []string{"json", "toon", "auto", "compact", "compact:500", "compact@json", "compact:300@toon", "upper=tr a-z A-Z"} {
		if _, err := ParseEncoding(s, nil); err != nil {
			t.Errorf("ParseEncoding(%q): %v", s, err)
		}
	}
	for _, s := range []string{"csv", "compact:0", "compact:x", "compact@csv", "compact300", "=cat", "x="} {
		if _, err := ParseEncoding(s, nil); err == nil {
			t.Errorf("ParseEncoding(%q): no error", s)
		}
	}
	// An external command: the decode reader reads its output when it is
	// something render decodes (here, the JSON itself).
	enc, _ := ParseEncoding("same=cat", nil)
	v := mustParse(t, `{"a":[1,2]}`)
	out, err := enc.Encode(context.Background(), v)
	if err != nil || out.Text != `{"a":[1,2]}` {
		t.Fatalf("cat encoding = %q, %v", out.Text, err)
	}
	bad, _ := ParseEncoding("fail=exit 3", nil)
	if _, err := bad.Encode(context.Background(), v); err == nil {
		t.Error("failing command: no error")
	}
}
