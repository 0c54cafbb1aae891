package mcpproxy

import (
	"fmt"
	"runtime/debug"
)

// recovered reports a panic recovered at a request boundary: logged at
// ERROR with its stack, and counted (Stats.Totals().Panics, and the
// gateway's terse_gateway_panics_total). The boundary then answers the
// request with an error, or with the upstream's original result, and
// serving goes on: one bad request never takes the process, and every
// other client with it, down.
func (o *Options) recovered(where string, r any, attrs ...any) {
	o.Logger.Error("recovered from a panic", append([]any{"where", where, "panic", fmt.Sprint(r), "stack", string(debug.Stack())}, attrs...)...)
	o.Stats.panicked(where)
}
