package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// buildTerse builds the terse binary into a temporary directory, as a
// user would, and returns its path.
func buildTerse(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped in -short mode")
	}
	bin := filepath.Join(t.TempDir(), "terse")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// terseRun runs the binary with args and stdin, and returns stdout and the
// exit status; stderr is returned for messages.
func terseRun(t *testing.T, bin string, stdin []byte, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return o.Bytes(), e.Bytes(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("terse %s: %v", strings.Join(args, " "), err)
	}
	return o.Bytes(), e.Bytes(), 0
}

// TestBinary builds the terse binary once and runs it as a user would:
// the TOON conformance suite and a round trip of every corpus JSON file,
// all with default flags.
func TestBinary(t *testing.T) {
	bin := buildTerse(t)
	t.Run("conformance", func(t *testing.T) { binaryConformance(t, bin) })
	t.Run("roundtrip", func(t *testing.T) { binaryRoundTrip(t, bin) })
}

// binaryConformance runs every case of the TOON v4.0 conformance suite
// through the built binary with default flags (only the case's own
// options become flags): terse encode must write the expected text and
// terse decode must give the expected value or fail. All 516 must pass.
func binaryConformance(t *testing.T, bin string) {
	dir := filepath.Join(corpus.Dir(t, "toon-spec/fixtures"))
	total, passed := 0, 0
	for _, category := range []string{"encode", "decode"} {
		paths, _ := filepath.Glob(filepath.Join(dir, category, "*.json"))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := tree.Parse(data)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			tests, _ := doc.Get("tests")
			for _, tc := range tests.Items() {
				total++
				name, _ := tc.Get("name")
				input, _ := tc.Get("input")
				expected, _ := tc.Get("expected")
				shouldError := false
				if v, ok := tc.Get("shouldError"); ok {
					shouldError = v.Bool()
				}
				var args []string
				if o, ok := tc.Get("options"); ok {
					if v, ok := o.Get("delimiter"); ok {
						args = append(args, "--delimiter", v.Str())
					}
					if v, ok := o.Get("indentSize"); ok {
						args = append(args, "--indent", v.Num())
					}
					if v, ok := o.Get("strict"); ok {
						args = append(args, "--strict="+strconv.FormatBool(v.Bool()))
					}
				}
				label := category + "/" + strings.TrimSuffix(filepath.Base(p), ".json") + "/" + name.Str()
				if category == "encode" {
					out, errOut, code := terseRun(t, bin, tree.AppendJSON(nil, input), append([]string{"encode", "--to", "toon"}, args...)...)
					got := strings.TrimSuffix(string(out), "\n")
					if code != 0 || got != expected.Str() {
						t.Errorf("%s: terse encode %s = (exit %d)\n%s\nwant\n%s\n%s", label, strings.Join(args, " "), code, got, expected.Str(), errOut)
						continue
					}
				} else {
					out, errOut, code := terseRun(t, bin, []byte(input.Str()), append([]string{"decode"}, args...)...)
					if shouldError {
						if code != 1 {
							t.Errorf("%s: terse decode %s of %q = (exit %d) %s, want an error", label, strings.Join(args, " "), input.Str(), code, out)
							continue
						}
					} else {
						got, err := tree.Parse(out)
						if code != 0 || err != nil || !numEqual(got, expected) {
							t.Errorf("%s: terse decode %s of %q = (exit %d) %s, want %s\n%s", label, strings.Join(args, " "), input.Str(), code, out, expected, errOut)
							continue
						}
					}
				}
				passed++
			}
		}
	}
	t.Logf("conformance through the binary, default flags: %d/%d fixtures pass", passed, total)
	if total != 516 {
		t.Errorf("found %d fixtures, want 516", total)
	}
}

// numEqual is tree.Equal with numbers compared by value (TOON decodes the
// token 1e6 to the number one million, which JSON may write either way)
// and, when unordered, object members compared as sets.
func numEqual(a, b tree.Value) bool { return modelEq(a, b, false) }

func modelEq(a, b tree.Value, unordered bool) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case tree.KindNumber:
		return canonical(a) == canonical(b)
	case tree.KindArray:
		ai, bi := a.Items(), b.Items()
		return len(ai) == len(bi) && !slices.ContainsFunc(seq(len(ai)), func(i int) bool { return !modelEq(ai[i], bi[i], unordered) })
	case tree.KindObject:
		am, bm := a.Members(), b.Members()
		if len(am) != len(bm) {
			return false
		}
		for i := range am {
			if unordered {
				j := slices.IndexFunc(bm, func(m tree.Member) bool { return m.Key == am[i].Key })
				if j < 0 || !modelEq(am[i].Value, bm[j].Value, true) {
					return false
				}
				continue
			}
			if am[i].Key != bm[i].Key || !modelEq(am[i].Value, bm[i].Value, false) {
				return false
			}
		}
		return true
	}
	return tree.Equal(a, b)
}

// canonical is a number's canonical TOON text (§2): equal values, equal
// text.
func canonical(v tree.Value) string { return string(toon.Append(nil, v, nil)) }

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// binaryRoundTrip encodes every corpus JSON file with the built binary
// and decodes the output with default flags (no --from): auto and
// TOON --exact give back the identical tree, canonical TOON (the default)
// the same values.
func binaryRoundTrip(t *testing.T, bin string) {
	files := corpus.Files(t, ".json")
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := tree.Parse(data)
		if err != nil {
			continue // not every .json in the corpus is one document
		}
		checked++
		name := corpus.Name(f)
		for _, mode := range [][]string{{"--to", "auto"}, {"--exact"}, {"--to", "toon"}} {
			enc, errOut, code := terseRun(t, bin, nil, append([]string{"encode", f}, mode...)...)
			if code != 0 {
				t.Errorf("%s: terse encode %v: exit %d\n%s", name, mode, code, errOut)
				continue
			}
			dec, errOut, code := terseRun(t, bin, enc, "decode")
			if code != 0 {
				t.Errorf("%s: terse encode %v | terse decode: exit %d\n%s", name, mode, code, errOut)
				continue
			}
			got, err := tree.Parse(dec)
			if err != nil {
				t.Fatalf("%s: decode output: %v", name, err)
			}
			if mode[len(mode)-1] == "toon" { // canonical TOON: the same values
				if !modelEq(got, want, true) {
					t.Errorf("%s: terse encode | terse decode gives different values", name)
				}
			} else if !tree.Equal(got, want) {
				t.Errorf("%s: terse encode %v | terse decode gives a different tree", name, mode)
			}
		}
	}
	if checked == 0 {
		t.Skip("no JSON document in the corpus")
	}
	t.Logf("%d corpus JSON files round-trip through the binary (auto, toon --exact, canonical toon)", checked)
}
