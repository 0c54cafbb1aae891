package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An Upstream starts connections to the MCP server the proxy wraps. The
// proxy dials again after a connection dies (a crashed server is restarted
// on the next request).
type Upstream interface {
	Dial(ctx context.Context) (Conn, error)
	// String names the upstream in logs and error messages.
	String() string
}

// Conn is one connection to an upstream: a stream of JSON-RPC messages,
// each one complete JSON text without the trailing newline.
//
// Read is called from one goroutine; Write may be called concurrently with
// Read; Close unblocks both.
type Conn interface {
	Read() ([]byte, error)
	Write(msg []byte) error
	Close() error
}

// MessageTooLargeError reports a message larger than the limit. Prefix
// holds its first bytes (enough to find its id).
type MessageTooLargeError struct {
	Limit  int
	Prefix []byte
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("message larger than %d bytes", e.Limit)
}

// readFrame reads one newline-delimited message of at most limit bytes. A
// longer line is consumed and reported as *MessageTooLargeError, so the
// stream stays usable. Blank lines are skipped.
func readFrame(r *bufio.Reader, limit int) ([]byte, error) {
	for {
		var buf []byte
		var tooLarge *MessageTooLargeError
		for {
			chunk, err := r.ReadSlice('\n')
			if tooLarge == nil {
				if len(buf)+len(chunk) > limit+1 {
					all := append(buf, chunk...)
					tooLarge = &MessageTooLargeError{Limit: limit, Prefix: bytes.Clone(all[:min(len(all), 4096)])}
					buf = nil
				} else {
					buf = append(buf, chunk...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if tooLarge != nil {
					return nil, tooLarge
				}
				if err == io.EOF && len(bytes.TrimSpace(buf)) > 0 {
					return bytes.TrimSpace(buf), nil
				}
				return nil, err
			}
			break
		}
		if tooLarge != nil {
			return nil, tooLarge
		}
		if line := bytes.TrimSpace(buf); len(line) > 0 {
			return line, nil
		}
	}
}

// Command is an Upstream that runs a stdio MCP server as a child process.
type Command struct {
	Path string
	Args []string
	// Env is the child's environment; nil means the proxy's.
	Env []string
	// Dir is the child's working directory; empty means the proxy's.
	Dir string
	// Stderr receives the child's stderr; nil discards it.
	Stderr io.Writer
	// MaxMessageBytes bounds one message from the child; 0 means 64 MiB.
	MaxMessageBytes int
}

func (c *Command) String() string { return strings.Join(append([]string{c.Path}, c.Args...), " ") }

// Dial starts the child process.
func (c *Command) Dial(ctx context.Context) (Conn, error) {
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env, cmd.Dir = c.Env, c.Dir
	cmd.Stderr = c.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting upstream %s: %w", c, err)
	}
	limit := c.MaxMessageBytes
	if limit <= 0 {
		limit = 64 << 20
	}
	cc := &cmdConn{cmd: cmd, in: stdin, out: bufio.NewReaderSize(stdout, 64<<10), limit: limit, done: make(chan struct{})}
	go func() {
		cc.waitErr = cmd.Wait()
		close(cc.done)
	}()
	return cc, nil
}

type cmdConn struct {
	cmd   *exec.Cmd
	wmu   sync.Mutex
	in    io.WriteCloser
	out   *bufio.Reader
	limit int

	done    chan struct{}
	waitErr error
	once    sync.Once
}

func (c *cmdConn) Read() ([]byte, error) {
	msg, err := readFrame(c.out, c.limit)
	if err == io.EOF || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, io.ErrUnexpectedEOF) {
		select {
		case <-c.done:
		case <-time.After(2 * time.Second):
		}
		select {
		case <-c.done:
			if c.waitErr != nil {
				return nil, fmt.Errorf("upstream exited: %v", c.waitErr)
			}
			return nil, errors.New("upstream exited")
		default:
			return nil, errors.New("upstream closed its stdout")
		}
	}
	return msg, err
}

func (c *cmdConn) Write(msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), '\n')
	_, err := c.in.Write(buf)
	return err
}

// Close closes the child's stdin, gives it a moment to exit, then kills it.
func (c *cmdConn) Close() error {
	c.once.Do(func() {
		c.wmu.Lock()
		c.in.Close()
		c.wmu.Unlock()
		select {
		case <-c.done:
		case <-time.After(time.Second):
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return nil
}

// HTTP is an Upstream reached over MCP Streamable HTTP.
type HTTP struct {
	URL string
	// Client is the HTTP client; nil means http.DefaultClient.
	Client *http.Client
}

func (h *HTTP) String() string { return h.URL }

// Dial opens a Streamable-HTTP connection (the session starts with the
// client's initialize request, relayed like any other).
func (h *HTTP) Dial(ctx context.Context) (Conn, error) {
	t := &mcp.StreamableClientTransport{Endpoint: h.URL, HTTPClient: h.Client}
	ctx, cancel := context.WithCancel(context.Background())
	c, err := t.Connect(ctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("connecting to upstream %s: %w", h.URL, err)
	}
	return &httpConn{c: c, ctx: ctx, cancel: cancel}, nil
}

type httpConn struct {
	c      mcp.Connection
	ctx    context.Context
	cancel context.CancelFunc
}

func (h *httpConn) Read() ([]byte, error) {
	m, err := h.c.Read(h.ctx)
	if err != nil {
		return nil, err
	}
	return jsonrpc.EncodeMessage(m)
}

func (h *httpConn) Write(msg []byte) error {
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return err
	}
	return h.c.Write(h.ctx, m)
}

func (h *httpConn) Close() error {
	err := h.c.Close()
	h.cancel()
	return err
}
