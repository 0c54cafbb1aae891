package fit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/terse-dev/terse/fit/readtest"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// promiseBudgets are the budgets the index's promises are checked at.
var promiseBudgets = []int{300, 600, 1000, 2500, 10000}

// reAnyHandle matches a chunk handle, to compare texts whose handles
// differ (other keys and scopes).
var reAnyHandle = regexp.MustCompile(`c_[0-9a-f]{16}`)

func withoutHandles(s string) string { return reAnyHandle.ReplaceAllString(s, "c_HANDLE") }

// promiseStats are the figures of TestChunkPromises.
type promiseStats struct {
	results, indexed, hinted             int
	chunks, whole, exact, withinBound    int
	over, overRight, flagsRight          int
	splits, splitsInBound, sumsInBound   int
	fetchedSplits, fetchedInBound        int
	maxRatio                             float64
	identical, compared, fetchIdentical  int
	fetchCompared, selIdentical, selSeen int
}

// TestChunkPromises is the index's word, checked on every corpus file at
// budgets 300, 600, 1,000, 2,500 and 10,000: every chunk of every index
// (or hint), fetched with exactly the call the text names (no budget of
// its own), comes back whole with the units it claims, unless it is
// marked over budget; every size listed is the count of what the fetch
// returns; a chunk is marked over budget exactly when that is more than
// the budget the text says a fetch gets; a chunk over budget comes back
// split into at most ⌈size/budget⌉+1 smaller chunks whose listed sizes
// add up to its size within their first lines; and the same call from
// another session, under another key, gives the same text but for its
// handles, and the same selection.
func TestChunkPromises(t *testing.T) {
	if testing.Short() {
		t.Skip("the whole corpus at five budgets, twice, and a second process")
	}
	ctx := context.Background()
	c := tokens.O200kBase()
	var ps promiseStats
	digest := sha256.New()
	files := corpusInputs(t)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range promiseBudgets {
			name := fmt.Sprintf("%s at %d", corpus.Name(f), b)
			oa := &Options{Budget: b, Counter: c, Store: &store.Mem{}, Scope: "session-a", Key: []byte("key of process a")}
			ob := &Options{Budget: b, Counter: c, Store: &store.Mem{}, Scope: "session-b", Key: []byte("key of process b")}
			ra, isJSON := fitFile(t, data, oa)
			rb, _ := fitFile(t, data, ob)
			ps.results++
			digest.Write([]byte(withoutHandles(ra.Text)))
			ps.compared++
			if withoutHandles(ra.Text) == withoutHandles(rb.Text) {
				ps.identical++
			} else {
				t.Errorf("%s: another session and key give another text:\n%s\n---\n%s", name, ra.Text, rb.Text)
			}
			if ra.sel != nil || rb.sel != nil {
				ps.selSeen++
				if slices.Equal(ra.sel, rb.sel) {
					ps.selIdentical++
				} else {
					t.Errorf("%s: another session and key fit other items", name)
				}
			}
			if !ra.Stats.Truncated || ra.Stats.Handle == "" {
				continue
			}
			r, err := readtest.Parse(ra.Text)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if r.FetchBudget != DefaultFetchBudget {
				t.Errorf("%s: the text says a fetch gets %d tokens, want %d:\n%s", name, r.FetchBudget, DefaultFetchBudget, ra.Text)
			}
			chunks := r.Chunks
			if chunks != nil {
				ps.indexed++
			} else {
				chunks = r.Ranges
				ps.hinted++
			}
			if len(chunks) == 0 {
				t.Errorf("%s: no chunk ranges in\n%s", name, ra.Text)
				continue
			}
			units := sourceUnits(t, data, isJSON, ra.Stats)
			rbp, _ := readtest.Parse(rb.Text)
			for _, ch := range chunks {
				ps.chunks++
				// The call the text names: no budget of its own.
				named := *oa
				named.Budget = 0
				got, err := FetchChunk(ctx, r.Handle, ch.N, &named)
				if err != nil {
					t.Errorf("%s: chunk %d: %v", name, ch.N, err)
					continue
				}
				digest.Write([]byte(withoutHandles(got.Text)))
				namedB := *ob
				namedB.Budget = 0
				if gb, err := FetchChunk(ctx, rbp.Handle, ch.N, &namedB); err == nil {
					ps.fetchCompared++
					if withoutHandles(gb.Text) == withoutHandles(got.Text) {
						ps.fetchIdentical++
					} else {
						t.Errorf("%s: chunk %d: another session gives another text", name, ch.N)
					}
				}
				real := c.Count(got.Text)
				if real > r.FetchBudget {
					t.Errorf("%s: chunk %d: %d tokens, over the %d a fetch gets", name, ch.N, real, r.FetchBudget)
				}
				if ch.Over == (got.Whole && real <= r.FetchBudget) {
					t.Errorf("%s: chunk %d marked over budget %v, but came back whole %v", name, ch.N, ch.Over, got.Whole)
				} else {
					ps.flagsRight++
				}
				if !ch.Over {
					if got.Whole && holdsUnits(got.Text, units, ch.A, ch.B, isJSON) {
						ps.whole++
					} else {
						t.Errorf("%s: chunk %d (units %d–%d) did not come back whole with them:\n%.300s", name, ch.N, ch.A, ch.B, got.Text)
					}
				}
				var size int // its size in full
				if got.Whole {
					size = real
				} else {
					full := *oa
					full.Budget = 1 << 30
					w, err := FetchChunk(ctx, r.Handle, ch.N, &full)
					if err != nil || !w.Whole {
						t.Fatalf("%s: chunk %d at any budget: %v", name, ch.N, err)
					}
					size = c.Count(w.Text)
				}
				if ch.Over {
					ps.over++
					if size > r.FetchBudget {
						ps.overRight++
					}
				}
				if ch.Size > 0 {
					if ch.Size >= size && float64(ch.Size) <= 1.05*float64(size) {
						ps.withinBound++
						if ch.Size == size {
							ps.exact++
						}
					} else {
						t.Errorf("%s: chunk %d listed ≈%d tokens, its fetch is %d", name, ch.N, ch.Size, size)
					}
					ps.maxRatio = max(ps.maxRatio, float64(ch.Size)/float64(size))
				}
				if !got.Whole {
					ps.splits++
					checkSplit(t, name, got.Text, size, &ps.splitsInBound, &ps.sumsInBound, true)
				}
				// Fetched with a budget of its own, about half its size.
				if half := size / 2; half >= 4*MinBudget && size <= 4*r.FetchBudget {
					hb := *oa
					hb.Budget = half
					sp, err := FetchChunk(ctx, r.Handle, ch.N, &hb)
					if err != nil {
						t.Fatal(err)
					}
					if !sp.Whole {
						ps.fetchedSplits++
						var inBound, sums int
						checkSplit(t, name+fmt.Sprintf(" chunk %d at %d", ch.N, half), sp.Text, size, &inBound, &sums, false)
						if inBound == 1 && sums == 1 {
							ps.fetchedInBound++
						} else if testing.Verbose() {
							// Units each a little over half the budget with
							// their first line fit one to a chunk: the bound
							// cannot hold for whole units.
							t.Logf("%s chunk %d at %d: %d tokens outside the split bound", name, ch.N, half, size)
						}
					}
				}
			}
		}
	}
	if ps.results == 0 {
		t.Skip("no corpus")
	}
	sum := hex.EncodeToString(digest.Sum(nil))
	if os.Getenv("TERSE_PROMISES_DIGEST") != "" {
		fmt.Println("digest", sum)
		return
	}
	t.Logf("%d results (%d files × %d budgets), %d with an index, %d with the hint alone", ps.results, len(files), len(promiseBudgets), ps.indexed, ps.hinted)
	t.Logf("%d chunks fetched with the call the text names: %d whole with the units they claim; %d marked over budget (%d of them over the fetch budget in full); %d flags right", ps.chunks, ps.whole, ps.over, ps.overRight, ps.flagsRight)
	t.Logf("listed sizes: %d within the bound (%d exact), largest listed/real %.3f", ps.withinBound, ps.exact, ps.maxRatio)
	t.Logf("over-budget chunks split: %d, %d within ⌈size/budget⌉+1 parts, %d with listed sizes adding up; fetched at half their size: %d split, %d within both bounds", ps.splits, ps.splitsInBound, ps.sumsInBound, ps.fetchedSplits, ps.fetchedInBound)
	t.Logf("another session and key: %d of %d texts identical but for handles, %d of %d selections, %d of %d chunk fetches; digest %s", ps.identical, ps.compared, ps.selIdentical, ps.selSeen, ps.fetchIdentical, ps.fetchCompared, sum[:16])
	// A second process gives the same bytes.
	cmd := exec.Command(os.Args[0], "-test.run=^TestChunkPromises$")
	cmd.Env = append(os.Environ(), "TERSE_PROMISES_DIGEST=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("second process: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "digest "+sum) {
		t.Errorf("a second process gives other texts: its output\n%s\nwant digest %s", out, sum)
	} else {
		t.Logf("a second process: the same digest")
	}
}

// checkSplit checks a split chunk's text against its size in full: at
// most ⌈size/budget⌉+1 smaller chunks (strict: an error when there are
// more), whose listed sizes add up to the size within their first lines.
// Runs of whole units cannot always keep to the bound (units of about
// half the budget, each with its first line, fit one to a chunk); only
// a chunk over the fetch budget is held to it, and the rest are counted.
func checkSplit(t *testing.T, name, text string, size int, inBound, sums *int, strict bool) {
	t.Helper()
	sp, err := readtest.ParseSplit(text)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if sp.Need != size {
		t.Errorf("%s: split says %d tokens in full, its fetch is %d", name, sp.Need, size)
	}
	bound := (size+sp.Budget-1)/sp.Budget + 1
	if len(sp.Subs) <= bound {
		*inBound++
	} else if strict {
		t.Errorf("%s: %d tokens split into %d chunks at %d, more than %d:\n%s", name, size, len(sp.Subs), sp.Budget, bound, text)
	}
	total := 0
	for _, s := range sp.Subs {
		total += s.Size
	}
	// Each smaller chunk repeats a first line of at most ~60 tokens.
	if total >= size-len(sp.Subs) && total <= size+60*len(sp.Subs) {
		*sums++
	} else {
		t.Errorf("%s: the smaller chunks list %d tokens for a chunk of %d:\n%s", name, total, size, text)
	}
}

// sourceUnits returns the units a fit of data counted (JSON items or
// members, in compact JSON; text lines; diff files as their lines).
func sourceUnits(t *testing.T, data []byte, isJSON bool, st Stats) []string {
	t.Helper()
	if !isJSON {
		lines := splitLines(string(data))
		if st.Unit == "lines" {
			return lines
		}
		return nil // diff files: checked by their count only
	}
	v, err := tree.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	at, err := tree.Lookup(v, tree.Pointer(st.Pointer))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	switch {
	case st.Unit == "members" && at.Kind() == tree.KindObject:
		for _, m := range at.Members() {
			out = append(out, string(tree.AppendJSON(nil, tree.Object(m))))
		}
	case at.Kind() == tree.KindArray:
		for _, it := range at.Items() {
			out = append(out, string(tree.AppendJSON(nil, it)))
		}
	default:
		out = []string{string(tree.AppendJSON(nil, v))}
	}
	return out
}

// holdsUnits reports whether a chunk fetched whole holds exactly the
// units a–b (1-based) of the source.
func holdsUnits(text string, units []string, a, b int, isJSON bool) bool {
	_, body, _ := strings.Cut(text, "\n")
	if units == nil {
		return true
	}
	if b > len(units) || a < 1 {
		return false
	}
	want := units[a-1 : b]
	if !isJSON {
		return body == strings.Join(want, "\n")
	}
	v, err := tree.ParseString(body)
	if err != nil {
		return false
	}
	var got []string
	switch v.Kind() {
	case tree.KindArray:
		for _, it := range v.Items() {
			got = append(got, string(tree.AppendJSON(nil, it)))
		}
	case tree.KindObject:
		if len(units) == 1 {
			got = []string{string(tree.AppendJSON(nil, v))}
		} else {
			for _, m := range v.Members() {
				got = append(got, string(tree.AppendJSON(nil, tree.Object(m))))
			}
		}
	default:
		got = []string{string(tree.AppendJSON(nil, v))}
	}
	return slices.Equal(got, want)
}
