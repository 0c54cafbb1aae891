package history

import "testing"

func TestParseState(t *testing.T) {
	tests := []struct {
		in      string
		want    State
		problem string
	}{
		{``, State{}, ""},
		{`{}`, State{}, ""},
		{`{"version":1,"boundary":12,"dropped":4,"first":"a","last":"b","calls":3,"prefix_changes":2}`,
			State{Version: 1, Boundary: 12, Dropped: 4, First: "a", Last: "b", Calls: 3, PrefixChanges: 2}, ""},
		{`{"boundary":12}`, State{Boundary: 12}, "version is missing"},
		{`{"version":1,"boundary":"12"}`, State{Version: 1}, `boundary is "12", want a non-negative integer`},
		{`{"version":1,"first":7}`, State{Version: 1}, `first is 7, want a string`},
		{`[1]`, State{}, "state is a JSON array, want an object"},
		{`{"version":1,"boundary":1e3}`, State{Version: 1}, "boundary is 1e3, want a non-negative integer"},
	}
	for _, tt := range tests {
		got, err := ParseState([]byte(tt.in))
		if err != nil {
			t.Errorf("ParseState(%s) error %v", tt.in, err)
			continue
		}
		if got.problem != tt.problem {
			t.Errorf("ParseState(%s) problem = %q, want %q", tt.in, got.problem, tt.problem)
		}
		got.problem = ""
		if got != tt.want {
			t.Errorf("ParseState(%s) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"version":1,"boundary":12,"dropped":4,"first":"a","last":"b","calls":3,"prefix_changes":2}`))
	f.Add([]byte(`{"version":1,"boundary":"x"}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseState(data)
		if err != nil {
			if s.problem == "" {
				t.Fatal("a syntax error must leave a State Reduce reports")
			}
			return
		}
		if s.problem != "" {
			return
		}
		again, err := ParseState(s.AppendJSON(nil))
		if err != nil || again != s {
			t.Fatalf("round trip: %+v → %s → %+v, %v", s, s.AppendJSON(nil), again, err)
		}
	})
}
