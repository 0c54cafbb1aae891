package profile

import (
	"fmt"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/tokens"
)

// Options returns the pipeline options of e: base (what the surface
// supplies: store, fetch command, handle key, dedup cache, shaping) with
// e's tokenizer, format, template and budget (the rule's budget when it
// sets one) and, when e has a tool rule, the rule's filter, strategy
// (by the rule's glob in Options.Strategies: the Report's
// strategy_source is "config"), item pointer and detail fields. It is the
// one resolution of a configuration into terse.Options; base's own values
// for these fields are replaced.
func (e *Effective) Options(base terse.Options) (terse.Options, error) {
	o := base
	counter, err := tokens.Get(e.Tokenizer)
	if err != nil {
		return o, err
	}
	k := e.Key()
	o.Tokenizer, o.Format, o.Template, o.Budget = counter, k.Format, k.Template, k.Budget
	o.Filter, o.Strategy, o.Strategies, o.Pointer, o.DropFields, o.KeepFields = nil, "", nil, "", nil, nil
	if r := e.Rule; r != nil {
		o.Filter = r.Rule()
		if r.Strategy != "" {
			o.Strategies = map[string]string{r.Match: r.Strategy}
		}
		o.Pointer = r.Items
		o.DropFields, o.KeepFields = r.DropFields, r.KeepFields
	}
	return o, nil
}

// New returns the pipeline of e's options over base (Options).
func (e *Effective) New(base terse.Options) (*terse.Pipeline, error) {
	o, err := e.Options(base)
	if err == nil {
		var p *terse.Pipeline
		if p, err = terse.New(&o); err == nil {
			return p, nil
		}
	}
	if e.Rule != nil {
		return nil, fmt.Errorf("tool %s: %w", e.Rule.Match, err)
	}
	return nil, err
}

// Key is what tells apart the pipeline options of two Effectives over
// the same base: effectives with equal keys give equal Options, so that
// a surface builds one pipeline per key and shares its caches.
type Key struct {
	Rule                        *config.Tool
	Tokenizer, Format, Template string
	Budget                      int
}

// Key returns e's key.
func (e *Effective) Key() Key {
	k := Key{Rule: e.Rule, Tokenizer: e.Tokenizer, Format: e.Format, Template: e.Template, Budget: e.Budget}
	if e.Rule != nil && e.Rule.Budget > 0 {
		k.Budget = e.Rule.Budget
	}
	return k
}
