package tokens

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"
)

var update = flag.Bool("update", false, "rewrite the rank images from tiktoken-go/tokenizer's vocabularies")

// vocabTokens returns the token bytes of ranks 0..n-1 of c.
func vocabTokens(tb testing.TB, c *codec.Codec, n int) []string {
	tb.Helper()
	toks := make([]string, n)
	for r := range n {
		s, err := c.Decode([]uint{uint(r)})
		if err != nil {
			tb.Fatalf("%s rank %d: %v", c.GetName(), r, err)
		}
		toks[r] = s
	}
	return toks
}

// The compiled-in rank images are the ones built from tiktoken-go/tokenizer's
// vocabularies (-update rewrites them).
func TestRankImages(t *testing.T) {
	for _, enc := range []struct {
		file, img string
		c         *codec.Codec
		n         int
	}{
		{"o200k_base.ranks", o200kImage, codec.NewO200kBase(), 199998},
		{"cl100k_base.ranks", cl100kImage, codec.NewCl100kBase(), 100256},
	} {
		img, err := buildRankImage(vocabTokens(t, enc.c, enc.n))
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(enc.file, img, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !bytes.Equal(img, []byte(enc.img)) {
			t.Errorf("%s differs from the image built from tiktoken-go/tokenizer (go test ./tokens -run RankImages -update)", enc.file)
		}
	}
}

// Every token of an image has its own rank, and each is its own piece count
// of 1.
func TestRanks(t *testing.T) {
	for _, c := range []*bpeCounter{O200kBase().(*bpeCounter), Cl100kBase().(*bpeCounter)} {
		tab := c.ranks
		seen := make([]bool, tab.n)
		for i := range tab.mask + 1 {
			e := tab.slot(i)
			if e == 0 {
				continue
			}
			r := uint32(e&(1<<slotRankBits-1)) - 1
			off := int(e >> (slotRankBits + slotLenBits) & (1<<slotOffBits - 1))
			tok := tab.blob[off : off+int(e>>slotRankBits&(1<<slotLenBits-1))]
			if got := tab.rank(tok); got != r {
				t.Fatalf("%s rank(%q) = %d, want %d", c.name, tok, got, r)
			}
			seen[r] = true
		}
		for r, ok := range seen {
			if !ok {
				t.Errorf("%s: rank %d missing", c.name, r)
			}
		}
	}
}

// TestByteRanks checks the byte ranks loadRankTable takes from the byte
// encoder's order against the images: every single byte has the rank
// the image gives it.
func TestByteRanks(t *testing.T) {
	for name, tb := range map[string]*rankTable{O200kBaseName: o200kRanks(), Cl100kBaseName: cl100kRanks()} {
		for b := range 256 {
			if r := tb.rank(string([]byte{byte(b)})); r == noRank || r != tb.byteRank[b] {
				t.Errorf("%s: byte %#x: image rank %d, loaded %d", name, b, r, tb.byteRank[b])
			}
		}
	}
}
