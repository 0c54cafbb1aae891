package lazyre

import "testing"

func TestLazy(t *testing.T) {
	r := New(`^a(b+)c$`)
	if r.re != nil {
		t.Fatal("compiled before first use")
	}
	if !r.MatchString("abbc") || r.MatchString("ac") {
		t.Error("MatchString")
	}
	if m := r.FindStringSubmatch("abc"); len(m) != 2 || m[1] != "b" {
		t.Errorf("FindStringSubmatch = %q", m)
	}
	if got := New(`b+`).ReplaceAllString("abbcb", "x"); got != "axcx" {
		t.Errorf("ReplaceAllString = %q", got)
	}
	if got := New(`(?m)^x(\d)`).FindAllStringSubmatch("x1\nx2", -1); len(got) != 2 || got[1][1] != "2" {
		t.Errorf("FindAllStringSubmatch = %q", got)
	}
	if got := New(`\d`).FindAllStringIndex("a1b2", -1); len(got) != 2 || got[1][0] != 3 {
		t.Errorf("FindAllStringIndex = %v", got)
	}
	if r.String() != `^a(b+)c$` {
		t.Error("String")
	}
}

func TestBadPanicsOnUse(t *testing.T) {
	r := New(`(`)
	defer func() {
		if recover() == nil {
			t.Error("a bad expression did not panic on first use")
		}
	}()
	r.MatchString("x")
}

func TestCompileAll(t *testing.T) {
	New(`[a-z]+`)
	if err := CompileAll(); err != nil && err.Error() != "error parsing regexp: missing closing ): `(`" {
		t.Fatal(err)
	}
	New(`(`)
	if err := CompileAll(); err == nil {
		t.Error("CompileAll passed with a bad expression")
	}
}
