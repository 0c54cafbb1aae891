package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse/tree"
)

// The gateway's upstream transport: the SDK client speaks to an upstream
// through rawTransport, which keeps the raw bytes of each tools/call
// result for the engine, and relays progress through a bounded queue.

// rawSlot receives the raw JSON of the result of the request written with
// a context carrying it (see withSlot).
type rawSlot struct{ raw []byte }

type slotKey struct{}

func withSlot(ctx context.Context, s *rawSlot) context.Context {
	return context.WithValue(ctx, slotKey{}, s)
}

// rawTransport is an mcp.Transport over an [Upstream]: the relay's own
// framing (message limit, malformed lines), with the raw result of calls
// kept (rawSlot) and progress relayed to its route.
type rawTransport struct {
	up Upstream
	u  *gwUpstream
}

func (t *rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.up.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return &rawConn{c: c, u: t.u}, nil
}

type rawConn struct {
	c     Conn
	u     *gwUpstream
	slots sync.Map // request id -> *rawSlot
}

func (c *rawConn) SessionID() string { return "" }
func (c *rawConn) Close() error      { return c.c.Close() }

func (c *rawConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.ID.IsValid() {
		if s, ok := ctx.Value(slotKey{}).(*rawSlot); ok {
			c.slots.Store(r.ID.Raw(), s)
		}
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.c.Write(b)
}

// Read returns the next message. An oversized message, or one that does
// not parse, is dropped and counted; when its id is readable, its request
// gets an error response in its place, so no call waits for an answer
// that will not come.
func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	o := &c.u.g.eng.opts
	for {
		frame, err := c.c.Read()
		if err == nil && len(frame) > o.maxMessage() {
			// Upstreams that frame their own messages (HTTP) meet the
			// same limit.
			err = &MessageTooLargeError{Limit: o.maxMessage(), Prefix: frame[:min(len(frame), 4096)]}
		}
		var fail string
		var id tree.Value
		if tl, ok := errors.AsType[*MessageTooLargeError](err); ok {
			id, fail = idFromPrefix(tl.Prefix), fmt.Sprintf("terse: the upstream's response was larger than %d bytes and was dropped", tl.Limit)
		} else if err != nil {
			return nil, err
		}
		var m jsonrpc.Message
		if fail == "" {
			if m, err = jsonrpc.DecodeMessage(frame); err != nil {
				id, fail = readableID(frame), "terse: the upstream's response was not valid JSON-RPC and was dropped"
			}
		}
		if fail != "" {
			o.Stats.rejected("upstream")
			o.Logger.Warn("dropped a message from upstream", "server", c.u.spec.Name, "reason", fail)
			if !validID(id) {
				continue
			}
			var raw any = id.Str()
			if id.Kind() == tree.KindNumber {
				n, err := id.Int()
				if err != nil {
					continue
				}
				raw = float64(n) // as decoded JSON numbers are

			}
			jid, err := jsonrpc.MakeID(raw)
			if err != nil {
				continue
			}
			return &jsonrpc.Response{ID: jid, Error: &jsonrpc.Error{Code: CodeUpstreamUnavailable, Message: fail}}, nil
		}
		switch r := m.(type) {
		case *jsonrpc.Response:
			if s, ok := c.slots.LoadAndDelete(r.ID.Raw()); ok {
				s.(*rawSlot).raw = r.Result
			}
		case *jsonrpc.Request:
			if !r.ID.IsValid() && r.Method == "notifications/progress" {
				var p mcp.ProgressNotificationParams
				if json.Unmarshal(r.Params, &p) == nil {
					if route, ok := c.u.routes.Load(p.ProgressToken); ok {
						route.(*progressRoute).send(&p)
					}
				}
			}
		}
		return m, nil
	}
}

// progressRoute relays one call's progress to its client off the
// upstream's read loop, through a bounded queue: a slow client drops its
// own progress, never stalls the upstream.
type progressRoute struct {
	ch   chan *mcp.ProgressNotificationParams
	done chan struct{}
	mu   sync.Mutex
	shut bool
}

const progressQueue = 64

func newProgressRoute(ctx context.Context, o *Options, ss *mcp.ServerSession, tok any) *progressRoute {
	r := &progressRoute{ch: make(chan *mcp.ProgressNotificationParams, progressQueue), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer func() {
			if v := recover(); v != nil {
				o.recovered("progress", v)
				for range r.ch { // drained, so that close returns
				}
			}
		}()
		for p := range r.ch {
			p.ProgressToken = tok
			ss.NotifyProgress(ctx, p) // the downstream request's ctx: see DEPS.md
		}
	}()
	return r
}

func (r *progressRoute) send(p *mcp.ProgressNotificationParams) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shut {
		return
	}
	select {
	case r.ch <- p:
	default: // the client is behind: drop this update
	}
}

// close ends the route once what is queued was delivered.
func (r *progressRoute) close() {
	r.mu.Lock()
	r.shut = true
	close(r.ch)
	r.mu.Unlock()
	<-r.done
}

// rawCallResult is a tools/call result sent as the raw JSON it holds.
func rawCallResult(raw []byte) mcp.Result {
	return &rawResult{CallToolResult: &mcp.CallToolResult{}, raw: raw}
}

// rawResult sends raw JSON as a result: the gateway keeps the upstream's
// bytes (key order included) instead of re-marshalling typed values.
type rawResult struct {
	*mcp.CallToolResult
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// rawListResult is a tools/list result sent as raw JSON.
type rawListResult struct {
	*mcp.ListToolsResult
	raw json.RawMessage
}

func (r *rawListResult) MarshalJSON() ([]byte, error) { return r.raw, nil }
