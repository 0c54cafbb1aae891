package fit

import "strings"

// Client is what a known agent client does with a large tool result: the
// limits it enforces, and the budget terse keeps under them. Budgets are
// in tokens of terse's counter (o200k_base); a client that counts with a
// tokenizer of its own gets a margin for the difference.
type Client struct {
	// Name is the client's name for people.
	Name string
	// Match lists substrings of the MCP clientInfo.name that identify it
	// (lower case).
	Match []string
	// LimitTokens is the largest MCP tool result the client accepts, in
	// its own tokens (0: none known). Claude Code fails a larger result
	// (MAX_MCP_OUTPUT_TOKENS, 25,000 by default).
	LimitTokens int
	// SpillChars: a successful result longer than this many characters
	// is written to a file and the model reads a reference to it instead
	// (0: never). A server raises it per tool with the tools/list _meta
	// key SpillMetaKey.
	SpillChars int
	// OutputTokens is where the client truncates a tool output it passes
	// on (0: it does not): Codex keeps about 10,000 tokens of a tool's
	// output, cut in the middle with a marker of its own.
	OutputTokens int
	// Budget is the largest result terse gives the client, in its own
	// counter's tokens: under LimitTokens (with a margin for the
	// client's tokenizer) and OutputTokens. It is the default budget of
	// a result, and what a chunk fetch without a budget of its own gets.
	Budget int
}

// SpillMetaKey is the tools/list _meta key with which an MCP server
// raises Claude Code's SpillChars for one tool (up to 500,000).
const SpillMetaKey = "anthropic/maxResultSizeChars"

// Clients is the table of known clients' limits, in one place. Claude
// Code's 25,000 tokens are its own tokenizer's, which counts about 13 %
// more than o200k_base on JSON: 20,000 keeps results under it. VS Code
// and Zed set no limit in the path their model reads MCP results through
// (microsoft/vscode mcpLanguageModelToolContribution.ts; zed
// crates/agent/src/tools/context_server_registry.rs), so they have no
// row; Cursor's and Windsurf's limits are not known from a source.
var Clients = []Client{
	{Name: "Claude Code", Match: []string{"claude-code", "claude code"}, LimitTokens: 25000, SpillChars: 50000, Budget: ClaudeCodeBudget},
	{Name: "Copilot CLI", Match: []string{"copilot-cli", "copilot cli"}, Budget: ClaudeCodeBudget},
	{Name: "Codex", Match: []string{"codex"}, OutputTokens: 10000, Budget: 10000},
}

// ClaudeCodeBudget is Claude Code's Budget in Clients: its 25,000-token
// limit, less the margin for its tokenizer.
const ClaudeCodeBudget = 20000

// ClientFor returns the entry of Clients whose Match the client name
// contains (case-insensitive), and whether there is one.
func ClientFor(name string) (Client, bool) {
	name = strings.ToLower(name)
	for _, c := range Clients {
		for _, m := range c.Match {
			if strings.Contains(name, m) {
				return c, true
			}
		}
	}
	return Client{}, false
}

// DefaultFetchBudget is Options.FetchBudget's default: the budget a chunk
// fetch without a budget of its own gets from every surface (the CLI's
// terse chunk, and the MCP proxy for Claude Code, whose results are kept
// to its Budget). A chunk index sizes its chunks to it.
const DefaultFetchBudget = ClaudeCodeBudget
