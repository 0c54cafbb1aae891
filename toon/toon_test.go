package toon_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

func mustParse(t testing.TB, s string) tree.Value {
	t.Helper()
	v, err := tree.ParseString(s)
	if err != nil {
		t.Fatalf("tree.ParseString(%q): %v", s, err)
	}
	return v
}

func TestCanonicalNumber(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"0", "0"},
		{"-0", "0"},
		{"-0.0", "0"},
		{"0e5", "0"},
		{"-0E-3", "0"},
		{"42", "42"},
		{"-7", "-7"},
		{"1.5000", "1.5"},
		{"12.340", "12.34"},
		{"1.0", "1"},
		{"1e6", "1000000"},
		{"1E+6", "1000000"},
		{"-1E+03", "-1000"},
		{"2.5e2", "250"},
		{"3E-02", "0.03"},
		{"1e-6", "0.000001"},
		{"0.00001234", "0.00001234"},
		{"1e-7", "1e-7"},
		{"-1.25e-10", "-1.25e-10"},
		{"100000000000000000000", "100000000000000000000"},
		{"1e20", "100000000000000000000"},
		{"1e21", "1e+21"},
		{"123e19", "1.23e+21"},
		{"1234567890123456789012", "1.234567890123456789012e+21"},
		{"9007199254740993", "9007199254740993"},
		{"0.3333333333333333", "0.3333333333333333"},
		{"1e400", "1e+400"},
		{"0.000e99", "0"},
		{"120e-1", "12"},
	} {
		if got := toon.CanonicalNumber(tt.in); got != tt.want {
			t.Errorf("CanonicalNumber(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEncodeOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		opts *toon.EncodeOptions
		want string
	}{
		{"canonical numbers by default", `{"a":1.50,"b":-0,"c":1E+3}`, nil, "a: 1.5\nb: 0\nc: 1000"},
		{"exact numbers", `{"a":1.50,"b":-0,"c":1E+3}`, &toon.EncodeOptions{ExactNumbers: true}, "a: 1.50\nb: -0\nc: 1E+3"},
		{"rows reordered into the header's order", `[{"a":1,"b":2},{"b":3,"a":4}]`, nil, "[2]{a,b}:\n  1,2\n  4,3"},
		{"KeepKeyOrder keeps rows of another order out of the table", `[{"a":1,"b":2},{"b":3,"a":4}]`,
			&toon.EncodeOptions{KeepKeyOrder: true}, "[2]:\n  - a: 1\n    b: 2\n  - b: 3\n    a: 4"},
		{"KeepKeyOrder still tabulates same-order rows", `[{"a":1,"b":2},{"a":3,"b":4}]`,
			&toon.EncodeOptions{KeepKeyOrder: true}, "[2]{a,b}:\n  1,2\n  3,4"},
		{"tab delimiter and indent 4", `{"x":{"t":["a b","c,d"]}}`, &toon.EncodeOptions{Delimiter: toon.Tab, IndentSize: 4},
			"x:\n    t[2\t]: a b\tc,d"},
		{"invalid delimiter means comma", `[1,2]`, &toon.EncodeOptions{Delimiter: ';'}, "[2]: 1,2"},
		{"empty object at root", `{}`, nil, ""},
		{"keyed object in a list item's first field", `[{"m":{"a":{"x":1},"b":{"x":2}},"k":1},{"k":2}]`, nil,
			"[2]:\n  - m[2:]{x}:\n      a: 1\n      b: 2\n    k: 1\n  - k: 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := string(toon.Append(nil, mustParse(t, tt.in), tt.opts))
			if got != tt.want {
				t.Errorf("Append(%s) =\n%s\nwant\n%s", tt.in, got, tt.want)
			}
		})
	}
}

func TestInvalidUTF8String(t *testing.T) {
	got := string(toon.Marshal(tree.Object(tree.Member{Key: "k\xff", Value: tree.String("a\xffb")})))
	if want := "\"k\uFFFD\": \"a\uFFFDb\""; got != want {
		t.Errorf("Marshal(invalid UTF-8) = %q, want %q", got, want)
	}
}

func TestDecodeKeepsNumberText(t *testing.T) {
	v, err := toon.UnmarshalString("a[4]: 1.5000,-1E+03,-0,05", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), `{"a":[1.5000,-1E+03,-0,"05"]}`; got != want {
		t.Errorf("Unmarshal = %s, want %s", got, want)
	}
}

func TestLenient(t *testing.T) {
	opts := &toon.DecodeOptions{Lenient: true}
	for _, tt := range []struct{ in, want string }{
		{"a:\n\tb: 1", `{"a":{"b":1}}`},
		{"t[3]{x,y}:\n  1\n  2,3,4", `{"t":[{"x":1,"y":null},{"x":2,"y":3}]}`},
		{"a[2]: x", `{"a":["x"]}`},
		{"a: 1\n    b: 2\nc: 3", `{"a":1,"c":3}`},
		{"[1]: x\njunk: 1", `["x"]`},
		{"k: \"a\xffb\"", "{\"k\":\"a\uFFFDb\"}"},
	} {
		v, err := toon.UnmarshalString(tt.in, opts)
		if err != nil {
			t.Errorf("Unmarshal(%q, lenient): %v", tt.in, err)
			continue
		}
		if got := v.String(); got != tt.want {
			t.Errorf("Unmarshal(%q, lenient) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestSyntaxError(t *testing.T) {
	for _, tt := range []struct {
		in      string
		err     string
		pointer tree.Pointer
	}{
		{"a:\n  b[2]: 1", "2:9: array declares 2 values, found 1", "/a/b"},
		{"items[2]:\n  - x: \"bad\\q\"\n  - 2", `2:12: invalid escape "\\q"; valid escapes are \\ \" \n \r \t \uXXXX`, "/items/0/x"},
		{"t[1]{a,b}:\n  1", "2:3: row has 1 value, header declares 2 fields", "/t/0"},
		{"k: \"über\\x\"", `1:9: invalid escape "\\x"; valid escapes are \\ \" \n \r \t \uXXXX`, "/k"},
		{"a/b:\n  c~d: \"x", "2:8: unterminated string", "/a~1b/c~0d"},
		{"a: \"x\xff\"", "1:6: invalid UTF-8", ""},
	} {
		_, err := toon.UnmarshalString(tt.in, nil)
		var se *toon.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Unmarshal(%q) error = %v, want a *toon.SyntaxError", tt.in, err)
			continue
		}
		if se.Error() != tt.err || se.Pointer != tt.pointer {
			t.Errorf("Unmarshal(%q) error = %q at %q, want %q at %q", tt.in, se.Error(), se.Pointer, tt.err, tt.pointer)
		}
	}
}

// chunkWriter records the size of each write.
type chunkWriter struct {
	bytes.Buffer
	writes int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

func TestEncoderStreams(t *testing.T) {
	rows := make([]tree.Value, 20000)
	for i := range rows {
		rows[i] = tree.Object(
			tree.Member{Key: "id", Value: tree.Int(int64(i))},
			tree.Member{Key: "name", Value: tree.String("row")},
		)
	}
	v := tree.Object(tree.Member{Key: "rows", Value: tree.Array(rows...)})
	var w chunkWriter
	enc := toon.NewEncoder(&w, &toon.EncodeOptions{Delimiter: toon.Pipe})
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	want := toon.Append(nil, v, &toon.EncodeOptions{Delimiter: toon.Pipe})
	if !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("Encoder output differs from Append output")
	}
	if w.writes < 2 {
		t.Errorf("Encoder wrote %d bytes in %d write, want several chunks", len(want), w.writes)
	}
	if err := enc.Encode(tree.String("next")); err != nil {
		t.Fatal(err)
	}
	if got := w.String(); !strings.HasSuffix(got, "\nnext") {
		t.Errorf("second document: output ends %q, want it on its own line", got[len(got)-10:])
	}
}

func TestDecoder(t *testing.T) {
	dec := toon.NewDecoder(strings.NewReader("a[2]: 1,2\nb: x"), nil)
	v, err := dec.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), `{"a":[1,2],"b":"x"}`; got != want {
		t.Errorf("Decode = %s, want %s", got, want)
	}
	if _, err := dec.Decode(); err != io.EOF {
		t.Errorf("second Decode error = %v, want io.EOF", err)
	}
}

// TestAppendAllocs: encoding into a buffer with room allocates nothing, so
// callers can price every subtree.
func TestAppendAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	v := mustParse(t, `{"users":[{"id":1,"name":"Ada","geo":{"lat":1.50,"lon":2}},{"id":2,"name":"Bob","geo":{"lat":3,"lon":4e2}}],
		"servers":{"a":{"host":"x","port":1},"b":{"host":"y","port":2}},"tags":["a","b,c"],"mixed":[1,{"k":"v"},[2]]}`)
	dst := make([]byte, 0, 4096)
	for _, opts := range []*toon.EncodeOptions{nil, {ExactNumbers: true, KeepKeyOrder: true}, {Delimiter: toon.Tab}} {
		if n := testing.AllocsPerRun(100, func() { dst = toon.Append(dst[:0], v, opts) }); n != 0 {
			t.Errorf("Append(%+v) allocates %v times per call, want 0", opts, n)
		}
	}
}

// TestEncoderStreamsLongString checks that a long quoted string, written
// out a piece at a time, encodes as Append encodes it, in place and with
// the lines after it intact.
func TestEncoderStreamsLongString(t *testing.T) {
	long := strings.Repeat("line é \"q\"\n\t", 40000) + "end" // ~480 KB, escapes throughout
	for _, v := range []tree.Value{
		tree.String(long),
		tree.Object(tree.Member{Key: "a", Value: tree.String(long)}, tree.Member{Key: "b", Value: tree.Int(1)}),
		tree.Array(tree.String(long), tree.Object(tree.Member{Key: "c", Value: tree.String(long)})),
	} {
		var w chunkWriter
		if err := toon.NewEncoder(&w, nil).Encode(v); err != nil {
			t.Fatal(err)
		}
		if want := toon.Append(nil, v, nil); !bytes.Equal(w.Bytes(), want) {
			t.Fatalf("Encoder output differs from Append output (%d vs %d bytes)", w.Len(), len(want))
		}
		if w.writes < 4 {
			t.Errorf("%d writes, want the string in several pieces", w.writes)
		}
	}
}
