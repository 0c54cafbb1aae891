package eval

import (
	"testing"

	"github.com/terse-dev/terse/tree"
)

// BenchmarkGenerate generates 10 questions for each corpus JSON document;
// throughput is in bytes of compact JSON.
func BenchmarkGenerate(b *testing.B) {
	var docs []Document
	n := 0
	for _, d := range corpusDocsTB(b) {
		docs = append(docs, d)
		n += tree.JSONLen(d.Value)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			Generate(d, 10, 1)
		}
	}
}

// BenchmarkGrade grades a mix of replies that need normalising.
func BenchmarkGrade(b *testing.B) {
	cases := [][2]string{
		{"Answer: 1,234.", "1234"},
		{"`https://github.com/acme/widget/issues/101`", "https://github.com/acme/widget/issues/101"},
		{"None", "null"},
		{"OPEN", "open"},
		{"Fix parser edge case 3", "Fix parser edge case 3"},
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range cases {
			Grade(c[0], c[1])
		}
	}
}
