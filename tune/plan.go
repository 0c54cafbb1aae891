package tune

import (
	"github.com/terse-dev/terse/config"
)

// Plan is a proposed configuration: the values rules set, each with the
// evidence that set it. Render writes it in the config file's schema.
type Plan struct {
	// Header lines (comments) open the file: what was read, the report.
	Header []string
	// Fired lists the rules that fired, with their evidence, in order.
	Fired []Finding
	// Notes are rules that did not fire, or findings without an effect.
	Notes []Finding

	MaxEntries, MaxEntriesRule int
	maxEntriesWhy              string
	MinSizeBytes               int
	minSizeWhy                 string
	LLM                        string // profiles.llm when pinned
	llmWhy                     string
	LLMVariants                []variant[config.LLMProfile]
	DataVariants               []variant[config.DataProfile]
	Tools                      []variant[config.Tool]
}

// Finding is one rule's outcome.
type Finding struct {
	Rule     string // R1..R6, P1..P3
	Subject  string // tool, endpoint or "session profile"
	Evidence string
	Effect   string // "" for notes
}

type variant[T any] struct {
	v   T
	why string
}

func (p *Plan) fire(rule, subject, evidence, effect string) string {
	p.Fired = append(p.Fired, Finding{rule, subject, evidence, effect})
	return rule + " (" + subject + "): " + evidence + " → " + effect
}

func (p *Plan) note(rule, subject, evidence string) {
	p.Notes = append(p.Notes, Finding{Rule: rule, Subject: subject, Evidence: evidence})
}

// Render writes the plan as a config file. It loads with config.Parse.
func (p *Plan) Render() string {
	var w tomlWriter
	for _, h := range p.Header {
		w.comment("%s", safeComment(h))
	}
	if len(p.Fired) > 0 {
		w.comment("")
		w.comment("Rules that fired (evidence → effect):")
		for _, f := range p.Fired {
			w.comment("  %s (%s): %s → %s", f.Rule, safeComment(f.Subject), safeComment(f.Evidence), safeComment(f.Effect))
		}
	}
	if len(p.Notes) > 0 {
		w.comment("")
		w.comment("Rules that did not fire:")
		for _, n := range p.Notes {
			w.comment("  %s (%s): %s", n.Rule, safeComment(n.Subject), safeComment(n.Evidence))
		}
	}
	if p.MaxEntries > 0 {
		w.blank()
		w.line("[dedup]")
		w.comment("%s", safeComment(p.maxEntriesWhy))
		w.line("max_entries = %d", p.MaxEntries)
	}
	if p.MinSizeBytes > 0 {
		w.blank()
		w.line("[proxy]")
		w.comment("%s", safeComment(p.minSizeWhy))
		w.line("min_size_bytes = %d", p.MinSizeBytes)
	}
	if p.LLM != "" {
		w.blank()
		w.line("[profiles]")
		w.comment("%s", safeComment(p.llmWhy))
		w.line("llm = %s", quote(p.LLM))
	}
	for _, v := range p.LLMVariants {
		w.blank()
		w.line("[[profiles.llm_variants]]")
		w.comment("%s", safeComment(v.why))
		w.line("name = %s", quote(v.v.Name))
		w.line("match = %s", quoteList(v.v.Match))
		w.line("tokenizer = %s", quote(v.v.Tokenizer))
		w.line("context_window = %d", v.v.ContextWindow)
		w.line("budget = %d", v.v.Budget)
	}
	for _, v := range p.DataVariants {
		w.blank()
		w.line("[[profiles.data_variants]]")
		w.comment("%s", safeComment(v.why))
		w.line("name = %s", quote(v.v.Name))
		w.line("match = %s", quote(v.v.Match))
		if v.v.Format != "" {
			w.line("format = %s", quote(v.v.Format))
		}
		if v.v.Template != "" {
			w.line("template = %s", quote(v.v.Template))
		}
		if v.v.Hints != nil {
			w.line("hints = %s", quoteList(v.v.Hints))
		}
	}
	for _, v := range p.Tools {
		w.blank()
		w.line("[[tools]]")
		w.comment("%s", safeComment(v.why))
		w.line("match = %s", quote(v.v.Match))
		w.line("template = %s", quote(v.v.Template))
	}
	return w.b.String()
}
