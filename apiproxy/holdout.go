package apiproxy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/terse-dev/terse/history"
)

// The arms of the A/B holdout.
const (
	ArmTerse   = "terse"   // rewritten as usual
	ArmHoldout = "holdout" // forwarded untouched
)

// DefaultHoldoutSeed picks the held-out conversations when no seed is
// configured.
const DefaultHoldoutSeed = "terse-holdout"

// Holdout forwards a share of conversations untouched, so that their
// billed cost can be compared with the rewritten ones'. The arm is a
// function of the conversation (its format and first message after the
// system prompt, which every request of it repeats; conversations that
// begin with the same message share an arm) and the seed: the same conversation is
// always in the same arm, across requests and restarts, and nothing
// in-band depends on the choice but whether the request is rewritten.
// A held-out request is rewritten as in a dry run (its savings are
// measured, the original is sent).
type Holdout struct {
	// Share is the share of conversations held out, 0 to 1.
	Share float64
	// Seed picks which ones ("": DefaultHoldoutSeed).
	Seed string
}

// assign returns the conversation thread of a request (a hash of the
// seed, the format and its first non-system message) and its arm; "" when the body
// does not decode or holds no message.
func (h *Holdout) assign(body []byte, f history.Format) (thread, arm string) {
	req, err := history.Decode(body, f)
	if err != nil {
		return "", ""
	}
	norm, _ := history.Normalize(req.Messages, []string{})
	first := slices.IndexFunc(norm, func(m history.Message) bool { return m.Role != history.RoleSystem })
	if first < 0 {
		return "", ""
	}
	seed := h.Seed
	if seed == "" {
		seed = DefaultHoldoutSeed
	}
	s := sha256.New()
	s.Write([]byte(seed))
	s.Write([]byte{0})
	s.Write([]byte(f.String()))
	s.Write([]byte{0})
	s.Write([]byte(history.Fingerprint(&norm[first])))
	var sum [sha256.Size]byte
	d := s.Sum(sum[:0])
	// The first 53 bits as a uniform number in [0, 1).
	u := float64(binary.BigEndian.Uint64(d[:8])>>11) / (1 << 53)
	arm = ArmTerse
	if u < h.Share {
		arm = ArmHoldout
	}
	return hex.EncodeToString(d[8:16]), arm
}

// ArmStats are one arm's billed costs (USD) from the provider's usage.
type ArmStats struct {
	Arm           string  `json:"arm"`
	Requests      int     `json:"requests"` // with usage reported
	Conversations int     `json:"conversations"`
	Cost          float64 `json:"cost"`
	// PerRequest and PerConversation are the mean billed cost of a
	// request and of a conversation.
	PerRequest      float64 `json:"per_request"`
	PerConversation float64 `json:"per_conversation"`
	// DirectCost is the modeled cost of the original requests (equal to
	// Cost in the holdout arm, whose originals were sent).
	DirectCost float64 `json:"direct_cost"`
}

// Interval is a difference of means (terse − holdout) with its bootstrap
// confidence interval [Lo, Hi] (when Bootstrapped: each arm has two
// conversations or more), and the ratio of the means (terse / holdout;
// 0 when the holdout's is 0).
type Interval struct {
	Diff         float64 `json:"diff"`
	Lo           float64 `json:"lo"`
	Hi           float64 `json:"hi"`
	Bootstrapped bool    `json:"bootstrapped"`
	Ratio        float64 `json:"ratio"`
}

func interval(t, h float64) Interval {
	iv := Interval{Diff: t - h}
	if h != 0 {
		iv.Ratio = t / h
	}
	return iv
}

// Comparison compares the billed cost of the two arms.
type Comparison struct {
	Terse   ArmStats `json:"terse"`
	Holdout ArmStats `json:"holdout"`
	// PerRequest and PerConversation compare the means, with a 95 %
	// percentile bootstrap interval resampling conversations (a
	// conversation's requests are not independent) within each arm.
	PerRequest      Interval `json:"per_request"`
	PerConversation Interval `json:"per_conversation"`
	Resamples       int      `json:"resamples"`
	Seed            uint64   `json:"seed"`
	// Unassigned counts requests with usage but no arm (holdout off,
	// bypassed, not decodable); they are in neither arm.
	Unassigned int `json:"unassigned"`
}

// CompareArms compares the arms of records (stats-file lines) by the
// billed cost of requests whose response reported usage. The bootstrap
// draws with a generator seeded by seed, so the same records give the
// same interval.
func CompareArms(records []Record, resamples int, seed uint64) Comparison {
	c := Comparison{Resamples: resamples, Seed: seed}
	type conv struct {
		cost     float64
		requests int
	}
	arms := map[string]map[string]*conv{ArmTerse: {}, ArmHoldout: {}}
	for i := range records {
		r := &records[i]
		if r.Usage.Reported == 0 {
			continue
		}
		m, ok := arms[r.Arm]
		if !ok {
			c.Unassigned++
			continue
		}
		key := r.Thread
		if key == "" {
			key = r.Conversation
		}
		x := m[key]
		if x == nil {
			x = &conv{}
			m[key] = x
		}
		x.cost += r.Cost
		x.requests++
		st := &c.Terse
		if r.Arm == ArmHoldout {
			st = &c.Holdout
		}
		st.Requests++
		st.Cost += r.Cost
		st.DirectCost += r.DirectCost
	}
	lists := map[string][]conv{}
	for arm, m := range arms {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			lists[arm] = append(lists[arm], *m[k])
		}
	}
	means := func(cs []conv) (perReq, perConv float64) {
		cost, n := 0.0, 0
		for _, x := range cs {
			cost += x.cost
			n += x.requests
		}
		if n == 0 {
			return 0, 0
		}
		return cost / float64(n), cost / float64(len(cs))
	}
	c.Terse.Arm, c.Holdout.Arm = ArmTerse, ArmHoldout
	c.Terse.Conversations, c.Holdout.Conversations = len(lists[ArmTerse]), len(lists[ArmHoldout])
	c.Terse.PerRequest, c.Terse.PerConversation = means(lists[ArmTerse])
	c.Holdout.PerRequest, c.Holdout.PerConversation = means(lists[ArmHoldout])
	c.PerRequest = interval(c.Terse.PerRequest, c.Holdout.PerRequest)
	c.PerConversation = interval(c.Terse.PerConversation, c.Holdout.PerConversation)
	t, h := lists[ArmTerse], lists[ArmHoldout]
	if len(t) < 2 || len(h) < 2 || resamples < 1 {
		return c // no interval from fewer than two conversations an arm
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	draw := func(cs []conv, buf []conv) []conv {
		buf = buf[:0]
		for range cs {
			buf = append(buf, cs[rng.IntN(len(cs))])
		}
		return buf
	}
	var dReq, dConv []float64
	var bt, bh []conv
	for range resamples {
		bt, bh = draw(t, bt), draw(h, bh)
		tr, tc := means(bt)
		hr, hc := means(bh)
		dReq = append(dReq, tr-hr)
		dConv = append(dConv, tc-hc)
	}
	c.PerRequest.Lo, c.PerRequest.Hi = percentiles(dReq)
	c.PerConversation.Lo, c.PerConversation.Hi = percentiles(dConv)
	c.PerRequest.Bootstrapped, c.PerConversation.Bootstrapped = true, true
	return c
}

// percentiles returns the 2.5th and 97.5th percentiles of xs (sorted in
// place).
func percentiles(xs []float64) (lo, hi float64) {
	sort.Float64s(xs)
	at := func(q float64) float64 {
		i := int(math.Round(q * float64(len(xs)-1)))
		return xs[i]
	}
	return at(0.025), at(0.975)
}
