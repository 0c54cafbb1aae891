package tokens

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/terse-dev/terse/internal/corpus"
)

// TestCorpusGolden compares the counts of every corpus file with
// testdata/corpus-counts.tsv, written by testdata/gen-counts.mjs from
// js-tiktoken and OpenAI's tiktoken (WebAssembly build).
func TestCorpusGolden(t *testing.T) {
	dir := corpus.Dir(t, "corpus")
	f, err := os.Open(filepath.Join("testdata", "corpus-counts.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o200k, cl100k := O200kBase(), Cl100kBase()
	sc := bufio.NewScanner(f)
	rows := 0
	for line := 0; sc.Scan(); line++ {
		if line == 0 {
			continue // header
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 3 {
			t.Fatalf("corpus-counts.tsv:%d: %d fields, want 3", line+1, len(fields))
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(fields[0])))
		if err != nil {
			t.Errorf("%v (regenerate testdata/corpus-counts.tsv?)", err)
			continue
		}
		rows++
		for i, c := range []Counter{o200k, cl100k} {
			want, err := strconv.Atoi(fields[i+1])
			if err != nil {
				t.Fatalf("corpus-counts.tsv:%d: %v", line+1, err)
			}
			if got := c.Count(string(data)); got != want {
				t.Errorf("%s Count(%s) = %d, want %d", c.Name(), fields[0], got, want)
			}
			if got := CountBytes(c, data); got != want {
				t.Errorf("%s CountBytes(%s) = %d, want %d", c.Name(), fields[0], got, want)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows == 0 {
		t.Fatal("corpus-counts.tsv has no rows")
	}
}

// tricky holds strings whose counts came from OpenAI's tiktoken 1.0.22
// (WebAssembly build of the Rust library; js-tiktoken 1.0.21 agrees on all).
var tricky = []struct {
	s             string
	o200k, cl100k int
}{
	{"", 0, 0},
	{"hello world", 2, 2},
	{"Hello, World!", 4, 4},
	{"don't", 1, 2},
	{"DON'T", 2, 2},
	{"I'm", 1, 2},
	{"we'll", 2, 2},
	{"they've", 2, 2},
	{"you're", 1, 2},
	{"she'd", 2, 2},
	{"it's", 1, 2},
	{"IT'S", 2, 2},
	{"It'S", 2, 2},
	{"'s", 1, 1},
	{"'sup", 2, 2},
	{"x's", 2, 2},
	{"1's", 2, 2},
	{"'ll'll", 2, 2},
	{"don'ſt", 4, 5},
	{"'ſ", 2, 3},
	{"AB'LL", 3, 3},
	{"supercalifragilistic", 6, 7},
	{"HTTPServerError", 3, 2},
	{"camelCaseIdentifierName", 4, 4},
	{"snake_case_name", 3, 3},
	{"ALLCAPS", 3, 3},
	{"ÀÉÎÕÜ", 5, 6},
	{"Straße", 2, 2},
	{"ǅemal", 4, 4},
	{"ǈ", 2, 2},
	{"ʰʲ", 4, 4},
	{"abcʰdef", 4, 4},
	{"日本語のテキスト", 6, 8},
	{"中文字符测试", 3, 4},
	{"한국어 텍스트", 5, 7},
	{"Привет, мир!", 5, 7},
	{"Γειά σου Κόσμε", 8, 13},
	{"مرحبا بالعالم", 4, 10},
	{"שלום עולם", 2, 10},
	{"हिन्दी", 3, 6},
	{"ภาษาไทย", 2, 9},
	{"😀", 1, 2},
	{"👍🏽", 3, 6},
	{"👨‍👩‍👧‍👦", 11, 18},
	{"🇺🇸🇫🇷", 8, 12},
	{"a😀b", 3, 4},
	{" 😀 ", 2, 2},
	{"e\u0301", 2, 2},
	{"E\u0301\u0302", 3, 4},
	{"\u0301", 1, 1},
	{" \u0301", 2, 2},
	{"\u0301A", 2, 2},
	{"x\u0301Y", 3, 3},
	{"ÅA\u030a", 3, 5},
	{"Ａｂｃ１２３", 7, 9},
	{"1", 1, 1},
	{"12", 1, 1},
	{"123", 1, 1},
	{"1234", 2, 2},
	{"12345", 2, 2},
	{"123456", 2, 2},
	{"1234567", 3, 3},
	{"12345678901234567890", 7, 7},
	{"3.14159", 4, 4},
	{"-42", 2, 2},
	{"1e10", 3, 3},
	{"٣٤٥٦", 4, 8},
	{"²³⁴", 4, 4},
	{"Ⅻ", 2, 2},
	{"½¾", 2, 2},
	{" ", 1, 1},
	{"  ", 1, 1},
	{"   ", 1, 1},
	{"\t", 1, 1},
	{"\n", 1, 1},
	{"\n\n", 1, 1},
	{"\r\n", 1, 1},
	{"\r\n\r\n", 1, 1},
	{" \n", 1, 1},
	{"\n \n", 1, 1},
	{"a\n \nb", 3, 3},
	{"a  b", 3, 3},
	{"a   b", 3, 3},
	{"a\t\tb", 3, 3},
	{"  \n  x", 3, 3},
	{"x  ", 2, 2},
	{"x\n  ", 3, 3},
	{"\u00a0", 1, 1},
	{"a\u00a0b", 3, 3},
	{"\u3000x", 2, 2},
	{"a\u2028b", 3, 4},
	{"a\u0085b", 4, 4},
	{"\ufeffx", 2, 2},
	{"<|endoftext|>", 7, 7},
	{"<|endofprompt|>", 7, 7},
	{"<|fim_prefix|>x<|fim_suffix|>", 13, 15},
	{"{\"key\": \"value\", \"n\": [1, 2, 3]}", 18, 18},
	{"https://example.com/path/to/file?q=1&r=2", 13, 13},
	{"a/b//c", 4, 4},
	{"!\n/!", 3, 3},
	{"...\r\n//", 2, 2},
	{"foo();\n\n}\n", 3, 3},
	{"    indented", 3, 3},
	{"\t\tif (x) {", 6, 6},
	{"0x1F600", 5, 5},
	{"deadbeefcafebabe0123456789abcdef", 11, 11},
	{"SGVsbG8gV29ybGQhIFRoaXMgaXMgYmFzZTY0IQ==", 27, 28},
	{"$$$", 2, 1},
	{"!!!???", 2, 2},
	{"—–-", 3, 3},
	{"«quoted»", 3, 3},
	{"©®™", 3, 3},
	// DEL, which tiktoken-go/tokenizer skips.
	{"a\x7fb c\x7f\x7f", 6, 6},
	// U+FFFD, what invalid UTF-8 counts as.
	{"a\ufffdb", 3, 3},
	{"\ufffd\ufffd\ufffd", 1, 1},
	{"x\ufffd\ufffdy", 3, 3},
	{"caf\ufffd au lait", 4, 5},
}

func TestTricky(t *testing.T) {
	o200k, cl100k := O200kBase(), Cl100kBase()
	for _, tt := range tricky {
		if got := o200k.Count(tt.s); got != tt.o200k {
			t.Errorf("o200k_base Count(%q) = %d, want %d", tt.s, got, tt.o200k)
		}
		if got := cl100k.Count(tt.s); got != tt.cl100k {
			t.Errorf("cl100k_base Count(%q) = %d, want %d", tt.s, got, tt.cl100k)
		}
	}
}

// TestRandomStrings compares counts with testdata/random-counts.json:
// strings over an alphabet of every character class the split patterns
// distinguish, counted by OpenAI's tiktoken (see gen-random.mjs).
func TestRandomStrings(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "random-counts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][3]any
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	o200k, cl100k := O200kBase(), Cl100kBase()
	for _, row := range rows {
		s := row[0].(string)
		for i, c := range []Counter{o200k, cl100k} {
			if got, want := c.Count(s), int(row[i+1].(float64)); got != want {
				t.Errorf("%s Count(%q) = %d, want %d", c.Name(), s, got, want)
			}
		}
	}
	if len(rows) < 1000 {
		t.Errorf("random-counts.json has %d rows, want 2000", len(rows))
	}
}

func TestSplitTricky(t *testing.T) {
	for _, e := range encodings {
		for _, tt := range tricky {
			checkSplit(t, e, tt.s)
		}
	}
}

// Invalid UTF-8 counts as tiktoken counts the text decoded with
// errors="replace": each maximal invalid subsequence becomes U+FFFD.
func TestInvalidUTF8(t *testing.T) {
	for _, tt := range []struct{ s, replaced string }{
		{"a\xffb", "a\ufffdb"},
		{"\xff\xfe\xfd", "\ufffd\ufffd\ufffd"},
		{"x\xe2\x82y", "x\ufffdy"},                 // truncated 3-byte sequence: one U+FFFD
		{"x\xed\xa0\x80y", "x\ufffd\ufffd\ufffdy"}, // surrogate: three
		{"caf\xe9 au lait", "caf\ufffd au lait"},
		{"\xc0\xaf", "\ufffd\ufffd"},
		{"\xf0\x9f\x98", "\ufffd"},
	} {
		if got := replaceInvalid(tt.s); got != tt.replaced {
			t.Errorf("replaceInvalid(%q) = %q, want %q", tt.s, got, tt.replaced)
		}
		for _, e := range encodings {
			c, _ := Get(e.name)
			if got, want := c.Count(tt.s), c.Count(tt.replaced); got != want {
				t.Errorf("%s Count(%q) = %d, want %d (as %q)", e.name, tt.s, got, want, tt.replaced)
			}
			if got, want := c.Count(tt.s), refCount(t, e.ref(), tt.s); got != want {
				t.Errorf("%s Count(%q) = %d, tiktoken-go (replace) %d", e.name, tt.s, got, want)
			}
		}
	}
}

func TestGet(t *testing.T) {
	for _, tt := range []struct {
		name  string
		exact bool
	}{
		{"o200k_base", true},
		{"cl100k_base", true},
		{"estimate", false},
	} {
		c, err := Get(tt.name)
		if err != nil {
			t.Fatalf("Get(%q): %v", tt.name, err)
		}
		if c.Name() != tt.name || c.Exact() != tt.exact {
			t.Errorf("Get(%q) = %s exact=%v, want %s exact=%v", tt.name, c.Name(), c.Exact(), tt.name, tt.exact)
		}
		if c2, _ := Get(tt.name); c2 != c {
			t.Errorf("Get(%q) twice returned different counters", tt.name)
		}
	}
	if _, err := Get("p50k_base"); err == nil {
		t.Error("Get(p50k_base) succeeded, want an error")
	}
}

// The long-piece merge and the scan merge agree on pieces either could take.
func TestMergeLongMatchesScan(t *testing.T) {
	c := O200kBase().(*bpeCounter)
	for _, s := range []string{
		"supercalifragilisticexpialidocious",
		strings.Repeat("ab", 60),
		strings.Repeat(" ", 100),
		"deadbeefcafebabe0123456789abcdefdeadbeefcafebabe0123456789abcdef",
		"日本語のテキスト日本語のテキスト日本語",
		strings.Repeat("x", 127),
	} {
		if got, want := c.ranks.bpeCountLong(s), c.ranks.bpeCount(s); got != want {
			t.Errorf("bpeCountLong(%q) = %d, want %d", s, got, want)
		}
	}
}

// Counting text whose pieces are cached or whole tokens does not allocate.
func TestCountAllocs(t *testing.T) {
	s := strings.Repeat(`{"id": 12345, "name": "terse", "tags": ["json", "toon"], "description": "Makes what an agent reads smaller."}`+"\n", 20)
	for _, c := range []Counter{O200kBase(), Cl100kBase()} {
		c.Count(s)
		if n := testing.AllocsPerRun(20, func() { c.Count(s) }); n != 0 {
			t.Errorf("%s Count allocates %v times per run, want 0", c.Name(), n)
		}
	}
}

// Counters are shared; concurrent counting (run with -race) agrees with
// sequential counting.
func TestConcurrent(t *testing.T) {
	texts := make([]string, 0, len(tricky)+1)
	for _, tt := range tricky {
		texts = append(texts, tt.s)
	}
	texts = append(texts, strings.Repeat("concurrently counted words and keys: 12345\n", 50))
	for _, c := range []Counter{O200kBase(), Cl100kBase()} {
		want := make([]int, len(texts))
		for i, s := range texts {
			want[i] = c.Count(s)
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for k := range 200 {
					i := (g + k) % len(texts)
					if got := c.Count(texts[i]); got != want[i] {
						t.Errorf("%s Count(%q) = %d concurrently, want %d", c.Name(), texts[i], got, want[i])
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// FuzzCount checks the scanners against the split regexps, and the counts
// against tiktoken-go/tokenizer: the whole count wherever that library splits
// as tiktoken does, else piece by piece (see TestReferenceSplitDiffers).
func FuzzCount(f *testing.F) {
	for _, tt := range tricky {
		f.Add(tt.s)
	}
	f.Add("a\xffb\xe2\x82 c")
	f.Add("Héllo\u00a0wörld\r\n\t 123456 'LL ſ")
	f.Add("x\n \n\t\r\n  y")
	// Audit cases: runs of one character (one long piece), a lone
	// surrogate's escape text and its UTF-8 form.
	f.Add(strings.Repeat("a", 250))
	f.Add(strings.Repeat(" ", 200) + "x")
	f.Add(strings.Repeat("=", 129))
	f.Add(`cut \ud83d"`)
	f.Add("cut \xed\xa0\xbd")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 256 {
			// Long inputs are the corpus tests' job; under coverage
			// instrumentation the references take seconds on them.
			t.Skip()
		}
		valid := replaceInvalid(s)
		for _, e := range encodings {
			c, _ := Get(e.name)
			got := c.Count(s)
			if v := c.Count(valid); got != v {
				t.Errorf("%s Count(%q) = %d, Count(replaced) = %d", e.name, s, got, v)
			}
			ps := refPieces(t, e.pattern, valid)
			if utf8.ValidString(s) {
				checkSplit(t, e, s)
			}
			if strings.Join(ps, "\x00") == strings.Join(refPieces(t, e.verbatim, valid), "\x00") {
				if want := refCount(t, e.ref(), s); got != want {
					t.Errorf("%s Count(%q) = %d, tiktoken-go %d", e.name, s, got, want)
				}
				continue
			}
			for _, p := range ps {
				checkPiece(t, e, p)
			}
		}
	})
}

// Long runs of one unit, the pieces that were slow to merge, count as
// js-tiktoken and tiktoken count them (testdata/run-counts.json, written by
// testdata/gen-runs.mjs), through Count and through the long-piece merge.
func TestRunCounts(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "run-counts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][4]any
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	o200k, cl100k := O200kBase(), Cl100kBase()
	for _, row := range rows {
		s := strings.Repeat(row[0].(string), int(row[1].(float64)))
		for i, c := range []Counter{o200k, cl100k} {
			if got, want := c.Count(s), int(row[i+2].(float64)); got != want {
				t.Errorf("%s Count(%q × %v) = %d, want %d", c.Name(), row[0], row[1], got, want)
			}
		}
		if len(s) > 1 && len(s) <= mergeScanMax {
			r := o200k.(*bpeCounter).ranks
			if got, want := r.bpeCountLong(s), r.bpeCount(s); got != want {
				t.Errorf("bpeCountLong(%q × %v) = %d, bpeCount %d", row[0], row[1], got, want)
			}
		}
	}
	if len(rows) < 500 {
		t.Errorf("run-counts.json has %d rows, want 560", len(rows))
	}
}
