package fit

import (
	"testing"
	"time"
)

// TestPutTimeoutGrowsWithSize: a large payload gets time to be hashed and
// written on top of the store call's bound (a 50 MB result through a
// shared directory store was reported unretrievable under load), while a
// small one keeps the bound as it is.
func TestPutTimeoutGrowsWithSize(t *testing.T) {
	base := DefaultStoreTimeout
	if got := putTimeout(base, 4<<10); got != base {
		t.Errorf("4 KB: %v, want %v", got, base)
	}
	if got := putTimeout(base, 50<<20); got != base+3*time.Second {
		t.Errorf("50 MB: %v, want %v", got, base+3*time.Second)
	}
}
