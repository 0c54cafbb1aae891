package eval

import "testing"

func TestGrade(t *testing.T) {
	for _, c := range []struct {
		reply, gold string
		want        bool
	}{
		{"42", "42", true},
		{"Answer: 42", "42", true},
		{"42.", "42", true},
		{"1.5", "1.50", true},      // numbers by value
		{"1500", "1.50e3", true},   // exponent
		{"12,500", "12500", true},  // thousands separators
		{"12.500", "12500", false}, // not a separator
		{"43", "42", false},        //
		{"None", "null", true},     // null spellings
		{"NULL", "null", true},     //
		{`""`, "empty", true},      // empty string
		{"an empty string", "empty", true},
		{"Absent", "absent", true},
		{"missing", "absent", true},
		{"null", "absent", false},
		{"OPEN", "open", true}, // enums without case
		{"open", "IN_PROGRESS", false},
		{`"open"`, "open", true},   // quotes
		{"'open'", "open", true},   //
		{"`open`", "open", true},   //
		{"**open**", "open", true}, // bold
		{"True", "true", true},     //
		{"Not shown.", NotShown, true},
		{"not shown in the document", NotShown, true},
		{"Not shown (the item was left out).", NotShown, true},
		{"not showing", NotShown, false},
		{"Fix parser edge case 3", "Fix parser edge case 3", true},
		{"fix parser edge case 3", "Fix parser edge case 3", false}, // titles keep case
		{"Fix parser edge case 3.", "Fix parser edge case 3", true},
		{"<https://x.test/a?b=1>", "https://x.test/a?b=1", true},
		{"https://x.test/a", "https://x.test/a?b=1", false},      // URLs in full
		{"```\nhttps://x.test/a\n```", "https://x.test/a", true}, // fenced
		{"```text\nabc\n```", "abc", true},
		{"\n\nabc\nbecause the document says so", "abc", true}, // first line
		{"The answer is: 7", "7", true},
		{"", "7", false},
		{"7", "", false},
	} {
		if got := Grade(c.reply, c.gold); got != c.want {
			t.Errorf("Grade(%q, %q) = %v, want %v (normalized %q, %q)", c.reply, c.gold, got, c.want, Normalize(c.reply), Normalize(c.gold))
		}
	}
	if !Grade("12", NotShown, "12") || Grade("13", NotShown, "12") {
		t.Error("Grade with also-accepted answers")
	}
}
