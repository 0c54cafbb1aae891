package store_test

import (
	"testing"
	"time"

	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/store/storetest"
)

func TestContractMem(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		c := storetest.NewClock()
		return storetest.Harness{S: &store.Mem{Now: c.Now, TTL: time.Minute}, TTL: time.Minute, Wait: c.Add}
	})
}

func TestContractDir(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		c := storetest.NewClock()
		return storetest.Harness{S: &store.Dir{Path: t.TempDir(), Now: c.Now, TTL: time.Minute}, TTL: time.Minute, Wait: c.Add}
	})
}

// TestContractDefaultTTL checks the zero TTL is DefaultTTL (30 minutes).
func TestContractDefaultTTL(t *testing.T) {
	for name, mk := range map[string]func(*storetest.Clock) store.Store{
		"mem": func(c *storetest.Clock) store.Store { return &store.Mem{Now: c.Now} },
		"dir": func(c *storetest.Clock) store.Store { return &store.Dir{Path: t.TempDir(), Now: c.Now} },
	} {
		t.Run(name, func(t *testing.T) {
			c := storetest.NewClock()
			storetest.RunCase(t, "idle_ttl", storetest.Harness{S: mk(c), TTL: store.DefaultTTL, Wait: c.Add})
		})
	}
}

func TestContractShared(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		c := storetest.NewClock()
		return storetest.Harness{S: &store.Shared{Store: &store.Mem{Now: c.Now, TTL: time.Minute}}, TTL: time.Minute, Wait: c.Add}
	})
}

func TestContractBounded(t *testing.T) {
	for name, mk := range map[string]func(*storetest.Clock) store.Store{
		"mem": func(c *storetest.Clock) store.Store {
			return &store.Mem{Now: c.Now, TTL: time.Minute, MaxBytes: 64 << 20}
		},
		"dir": func(c *storetest.Clock) store.Store {
			return &store.Dir{Path: t.TempDir(), Now: c.Now, TTL: time.Minute, MaxBytes: 64 << 20}
		},
	} {
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) storetest.Harness {
				c := storetest.NewClock()
				return storetest.Harness{S: mk(c), TTL: time.Minute, Wait: c.Add}
			})
		})
	}
}
