package filter_test

import (
	"fmt"

	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/tree"
)

func Example() {
	rule, err := filter.Compile(filter.Spec{
		Select: []filter.Field{
			{Path: "number"},
			{Path: "title"},
			{Out: "author", Path: "user.login"},
			{Out: "labels", Path: "labels[*].name"},
		},
		MaxItems: 2,
		Recover:  "call with _output_mode=raw for all",
	})
	if err != nil {
		panic(err)
	}
	payload, _ := tree.ParseString(`{"total_count": 3, "items": [
		{"number": 1, "title": "Crash", "user": {"login": "ada", "id": 1}, "labels": [{"name": "bug"}], "node_id": "I_1"},
		{"number": 2, "title": "Typo", "user": {"login": "bob", "id": 2}, "labels": [], "node_id": "I_2"},
		{"number": 3, "title": "Docs", "user": {"login": "cy", "id": 3}, "labels": [], "node_id": "I_3"}]}`)

	res := rule.Apply(payload, nil)
	fmt.Println(string(res.Append(nil)))
	fmt.Println(res.Report.Root, res.Report.Total, res.Report.Count)
	// Output:
	// > [filtered: showing 2 of 3 items; 3 fields per item omitted by config; call with _output_mode=raw for all]
	// {"total_count":3,"items":[{"number":1,"title":"Crash","author":"ada","labels":["bug"]},{"number":2,"title":"Typo","author":"bob","labels":[]}]}
	// /items 3 2
}

func ExampleCompactSpec() {
	rule, _ := filter.Compile(filter.Spec{Compact: &filter.CompactSpec{
		Header: "Pull requests ({{.Total}}):",
		Item:   "  #{{.number}} {{.title}} by {{.author.login}}",
	}})
	payload, _ := tree.ParseString(`[{"number": 7, "title": "Fix", "author": {"login": "ada"}}, {"number": 8, "title": "Ghost"}]`)
	fmt.Println(rule.Apply(payload, nil).Text)
	// Output:
	// Pull requests (2):
	//   #7 Fix by ada
	//   #8 Ghost by
}

func ExampleTextSpec() {
	rule, _ := filter.Compile(filter.Spec{Text: &filter.TextSpec{
		Exclude:  []string{`^\s+Compiling`},
		Collapse: true,
	}})
	res := rule.ApplyText("   Compiling a\nwarning: x\nwarning: x\nerror: y\n", nil)
	fmt.Println(res.Note)
	fmt.Println(res.Text)
	// Output:
	// > [filtered: 1 of 4 lines dropped by pattern]
	// warning: x (x2)
	// error: y
}
