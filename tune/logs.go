package tune

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Result is one tool result of a transcript.
type Result struct {
	ID        string          // the call's id (Claude Code's tool_use_id, Codex's call_id)
	Tool      string          // Claude Code tool name, mcp__SERVER__TOOL, or Codex tool
	Path      string          // file path from the call's arguments, if any
	Input     json.RawMessage // the call's arguments (JSON), if any
	WorkDir   string          // the session's working directory at the result, if known
	Text      string          // what the model read
	IsError   bool
	Partition int // compactions before it in its session
	Sidechain bool
}

// Session is one transcript (a Claude Code session or sub-agent, or a
// Codex rollout).
type Session struct {
	File, ID    string
	Agent       string // "claude" or "codex"
	Sidechain   bool
	Models      map[string]int // assistant messages (turns, for Codex) by model
	Results     []Result
	Compactions int
}

// Logs is what ReadLogs read.
type Logs struct {
	Sessions []*Session
	Files    int
	Lines    int
	// Skipped counts lines that are not JSON objects (truncated,
	// foreign); Unknown counts JSON lines of neither format, and
	// Unmatched tool results whose call was not seen.
	Skipped, Unknown, Unmatched int
}

// DefaultLogFiles lists the transcripts under the home directory: Claude
// Code's ~/.claude/projects/*/*.jsonl (sub-agents included, also in
// SESSION/subagents/) and Codex's ~/.codex/sessions/**/*.jsonl.
func DefaultLogFiles() ([]string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	var files []string
	for _, g := range []string{".claude/projects/*/*.jsonl", ".claude/projects/*/*/subagents/*.jsonl"} {
		m, _ := filepath.Glob(filepath.Join(home, g))
		files = append(files, m...)
	}
	codex := filepath.Join(home, ".codex", "sessions")
	if _, err := os.Stat(codex); err == nil {
		m, err := LogFiles(codex)
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no transcripts in %s or %s (use --input-dir)", filepath.Join(home, ".claude", "projects"), codex)
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// LogFiles lists the *.jsonl files under dir, recursively, sorted. A
// missing directory is an error that says so.
func LogFiles(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist", dir)
		}
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

// ReadLogs reads transcripts. Unusable lines are skipped and counted.
func ReadLogs(files []string) (*Logs, error) {
	l := &Logs{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		err = l.Read(fh, f)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		l.Files++
	}
	return l, nil
}

// maxLogLine bounds a transcript line (tool results can be large).
const maxLogLine = 64 << 20

// Read reads one transcript stream named name. It returns only read
// errors.
func (l *Logs) Read(r io.Reader, name string) error {
	p := &parser{l: l, file: name, sessions: map[string]*Session{}, calls: map[string]call{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLogLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		l.Lines++
		p.line(line)
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		l.Skipped++ // the rest of the file is one over-long line
	} else if sc.Err() != nil {
		return sc.Err()
	}
	for _, id := range p.order {
		s := p.sessions[id]
		if s.Agent == "claude" && p.boundaries == 0 {
			s.Compactions += p.summaries
		}
		l.Sessions = append(l.Sessions, s)
	}
	return nil
}

type call struct {
	tool, path string
	input      json.RawMessage
}

type parser struct {
	l                     *Logs
	file                  string
	sessions              map[string]*Session
	order                 []string
	calls                 map[string]call
	cur                   *Session // Codex: the rollout's session
	cwd                   string   // Codex: the rollout's working directory
	boundaries, summaries int
}

func (p *parser) session(id, agent string, side bool) *Session {
	key := agent + "/" + id
	s := p.sessions[key]
	if s == nil {
		s = &Session{File: p.file, ID: id, Agent: agent, Sidechain: side, Models: map[string]int{}}
		p.sessions[key] = s
		p.order = append(p.order, key)
	}
	return s
}

type claudeLine struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	IsSidechain      bool            `json:"isSidechain"`
	SessionID        string          `json:"sessionId"`
	AgentID          string          `json:"agentId"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	Cwd              string          `json:"cwd"`
	Message          json.RawMessage `json:"message"`
	Payload          json.RawMessage `json:"payload"`
}

type claudeMessage struct {
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

type block struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Text      string          `json:"text"`
}

func (p *parser) line(b []byte) {
	if b[0] != '{' {
		p.l.Skipped++
		return
	}
	var cl claudeLine
	if json.Unmarshal(b, &cl) != nil {
		p.l.Skipped++
		return
	}
	if cl.Payload != nil {
		p.codex(cl.Type, cl.Payload)
		return
	}
	switch cl.Type {
	case "user", "assistant", "system":
	case "progress", "queue-operation", "file-history-snapshot", "summary":
		return
	default:
		p.l.Unknown++
		return
	}
	if cl.SessionID == "" {
		p.l.Unknown++
		return
	}
	id := cl.SessionID
	if cl.IsSidechain && cl.AgentID != "" {
		id += "/" + cl.AgentID
	}
	s := p.session(id, "claude", cl.IsSidechain)
	if strings.HasPrefix(cl.AgentID, "acompact") && s.Compactions == 0 {
		s.Compactions = 1 // the transcript of a compaction
	}
	if cl.Type == "system" {
		if cl.Subtype == "compact_boundary" {
			s.Compactions++
			p.boundaries++
		}
		return
	}
	if cl.IsCompactSummary {
		p.summaries++
	}
	var m claudeMessage
	if json.Unmarshal(cl.Message, &m) != nil {
		return
	}
	if cl.Type == "assistant" && m.Model != "" && m.Model != "<synthetic>" {
		s.Models[m.Model]++
	}
	var blocks []block
	if len(m.Content) == 0 || m.Content[0] != '[' || json.Unmarshal(m.Content, &blocks) != nil {
		return
	}
	for _, bl := range blocks {
		switch bl.Type {
		case "tool_use":
			p.calls[bl.ID] = call{bl.Name, argPath(bl.Input), bl.Input}
		case "tool_result":
			c, ok := p.calls[bl.ToolUseID]
			if !ok {
				p.l.Unmatched++
				c.tool = "unknown"
			}
			s.Results = append(s.Results, Result{ID: bl.ToolUseID, Tool: c.tool, Path: c.path, Input: c.input, WorkDir: cl.Cwd,
				Text: contentText(bl.Content), IsError: bl.IsError, Partition: s.Compactions, Sidechain: cl.IsSidechain})
		}
	}
}

// argPath is the file path of a call's arguments (file_path, path or
// notebook_path), if any.
func argPath(in json.RawMessage) string {
	var a struct {
		FilePath     string `json:"file_path"`
		Path         string `json:"path"`
		NotebookPath string `json:"notebook_path"`
	}
	if len(in) > 0 && in[0] == '"' { // Codex: arguments as a JSON string
		var s string
		if json.Unmarshal(in, &s) == nil {
			in = json.RawMessage(s)
		}
	}
	if json.Unmarshal(in, &a) != nil {
		return ""
	}
	switch {
	case a.FilePath != "":
		return a.FilePath
	case a.NotebookPath != "":
		return a.NotebookPath
	}
	return a.Path
}

// codexArgs is a Codex call's arguments as a JSON object: Codex writes
// them as a JSON string holding the object.
func codexArgs(in json.RawMessage) json.RawMessage {
	if len(in) > 0 && in[0] == '"' {
		var s string
		if json.Unmarshal(in, &s) == nil {
			return json.RawMessage(s)
		}
	}
	return in
}

// contentText is the text of a tool result's content: a string, or the
// text blocks of a list (images and other blocks are left out).
func contentText(c json.RawMessage) string {
	if len(c) == 0 {
		return ""
	}
	var s string
	if c[0] == '"' && json.Unmarshal(c, &s) == nil {
		return s
	}
	var blocks []block
	if c[0] == '[' && json.Unmarshal(c, &blocks) == nil {
		var b strings.Builder
		for i, bl := range blocks {
			if bl.Text == "" {
				continue
			}
			if i > 0 && b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(bl.Text)
		}
		return b.String()
	}
	if c[0] == '{' {
		var bl block
		if json.Unmarshal(c, &bl) == nil && bl.Text != "" {
			return bl.Text
		}
	}
	return string(c)
}

type codexPayload struct {
	Type       string          `json:"type"`
	ID         string          `json:"id"`
	Model      string          `json:"model"`
	CallID     string          `json:"call_id"`
	Name       string          `json:"name"`
	Cwd        string          `json:"cwd"`
	Arguments  json.RawMessage `json:"arguments"`
	Input      json.RawMessage `json:"input"`
	Output     json.RawMessage `json:"output"`
	Invocation *struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
	} `json:"invocation"`
	Result json.RawMessage `json:"result"`
}

func (p *parser) codex(typ string, raw json.RawMessage) {
	var pl codexPayload
	if json.Unmarshal(raw, &pl) != nil {
		p.l.Skipped++
		return
	}
	if p.cur == nil || typ == "session_meta" && pl.ID != "" && p.cur.ID == "" {
		if p.cur == nil {
			p.cur = p.session(pl.ID, "codex", false)
		} else {
			p.cur.ID = pl.ID
		}
	}
	s := p.cur
	if pl.Cwd != "" && (typ == "session_meta" || typ == "turn_context") {
		p.cwd = pl.Cwd
	}
	switch typ {
	case "session_meta", "event_msg", "world_state", "inter_agent_communication_metadata":
	case "turn_context":
		if pl.Model != "" {
			s.Models[pl.Model]++
		}
		return
	case "compacted":
		s.Compactions++
		return
	case "response_item":
		switch pl.Type {
		case "function_call":
			p.calls[pl.CallID] = call{pl.Name, argPath(pl.Arguments), codexArgs(pl.Arguments)}
		case "custom_tool_call":
			p.calls[pl.CallID] = call{pl.Name, argPath(pl.Input), codexArgs(pl.Input)}
		case "function_call_output", "custom_tool_call_output":
			c, ok := p.calls[pl.CallID]
			if !ok {
				p.l.Unmatched++
				c.tool = "unknown"
			}
			s.Results = append(s.Results, Result{ID: pl.CallID, Tool: c.tool, Path: c.path, Input: c.input, WorkDir: p.cwd,
				Text: contentText(pl.Output), Partition: s.Compactions})
		}
		return
	default:
		p.l.Unknown++
		return
	}
	if typ == "event_msg" && pl.Type == "mcp_tool_call_end" && pl.Invocation != nil {
		if _, ok := p.calls[pl.CallID]; ok && pl.CallID != "" {
			return // its function_call_output is the result the model read
		}
		var res struct {
			Ok *struct {
				Content json.RawMessage `json:"content"`
				IsError bool            `json:"isError"`
			} `json:"Ok"`
			Err json.RawMessage `json:"Err"`
		}
		json.Unmarshal(pl.Result, &res)
		r := Result{ID: pl.CallID, Tool: "mcp__" + pl.Invocation.Server + "__" + pl.Invocation.Tool, Partition: s.Compactions}
		if res.Ok != nil {
			r.Text, r.IsError = contentText(res.Ok.Content), res.Ok.IsError
		} else {
			r.Text, r.IsError = contentText(res.Err), true
		}
		s.Results = append(s.Results, r)
	}
}
