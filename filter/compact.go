package filter

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/terse-dev/terse/tree"
)

// compactRule holds the parsed templates. Parsed templates may be executed
// in parallel (text/template guarantees it), so a Rule stays safe for
// concurrent use.
type compactRule struct {
	header, item, footer *template.Template
}

// fieldFunc is the name of the lookup function every field reference is
// rewritten to call. It cannot clash with a template's own names: users
// cannot define functions, and no built-in starts with an underscore.
const fieldFunc = "_terse_field"

// iterFunc ends the pipeline of every range action: a missing field ("")
// ranges over nothing instead of failing.
const iterFunc = "_terse_iter"

var compactFuncs = template.FuncMap{fieldFunc: lookupField, iterFunc: iterable}

func iterable(v any) any {
	if s, ok := v.(string); ok && s == "" {
		return jsonArray(nil)
	}
	return v
}

func compileCompact(s CompactSpec) (*compactRule, error) {
	if strings.TrimSpace(s.Item) == "" {
		return nil, fmt.Errorf("compact.item: template is required")
	}
	c := &compactRule{}
	var err error
	parse := func(name, text string) *template.Template {
		if text == "" || err != nil {
			return nil
		}
		t, perr := template.New(name).Option("missingkey=zero").Funcs(compactFuncs).Parse(text)
		if perr != nil {
			err = fmt.Errorf("%s: %v", name, perr)
			return nil
		}
		for _, tt := range t.Templates() {
			if tt.Tree != nil {
				rewriteNode(tt.Tree.Root)
			}
		}
		return t
	}
	c.header = parse("compact.header", s.Header)
	c.item = parse("compact.item", s.Item)
	c.footer = parse("compact.footer", s.Footer)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// The rewrite below turns every field reference (.a.b, $x.a, (pipe).a)
// into a call of lookupField, which answers "" for anything missing. Left
// to itself, text/template prints "<no value>" for a missing map key and
// aborts the whole execution when a chain passes through a missing or null
// value; both would reach the model.

func rewriteNode(n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			rewriteNode(c)
		}
	case *parse.ActionNode:
		rewritePipe(n.Pipe)
	case *parse.IfNode:
		rewriteBranch(&n.BranchNode)
	case *parse.RangeNode:
		rewriteBranch(&n.BranchNode)
		if p := n.Pipe; p != nil && len(p.Cmds) > 0 {
			p.Cmds = append(p.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: p.Pos,
				Args: []parse.Node{&parse.IdentifierNode{NodeType: parse.NodeIdentifier, Pos: p.Pos, Ident: iterFunc}}})
		}
	case *parse.WithNode:
		rewriteBranch(&n.BranchNode)
	case *parse.TemplateNode:
		rewritePipe(n.Pipe)
	}
}

func rewriteBranch(b *parse.BranchNode) {
	rewritePipe(b.Pipe)
	rewriteNode(b.List)
	if b.ElseList != nil {
		rewriteNode(b.ElseList)
	}
}

func rewritePipe(p *parse.PipeNode) {
	if p == nil {
		return
	}
	for _, cmd := range p.Cmds {
		for i, arg := range cmd.Args {
			if i == 0 && len(cmd.Args) > 1 {
				// A field in function position is a method call with
				// arguments; our data has no methods, so leave it to fail
				// visibly.
				if _, ok := arg.(*parse.FieldNode); ok {
					continue
				}
			}
			cmd.Args[i] = rewriteArg(arg)
		}
	}
}

func rewriteArg(a parse.Node) parse.Node {
	switch a := a.(type) {
	case *parse.FieldNode:
		return lookupCall(a.Pos, &parse.DotNode{NodeType: parse.NodeDot, Pos: a.Pos}, a.Ident)
	case *parse.VariableNode:
		if len(a.Ident) > 1 {
			v := &parse.VariableNode{NodeType: parse.NodeVariable, Pos: a.Pos, Ident: a.Ident[:1]}
			return lookupCall(a.Pos, v, a.Ident[1:])
		}
	case *parse.ChainNode:
		return lookupCall(a.Pos, rewriteArg(a.Node), a.Field)
	case *parse.PipeNode:
		rewritePipe(a)
	}
	return a
}

func lookupCall(pos parse.Pos, recv parse.Node, keys []string) parse.Node {
	args := []parse.Node{&parse.IdentifierNode{NodeType: parse.NodeIdentifier, Pos: pos, Ident: fieldFunc}, recv}
	for _, k := range keys {
		args = append(args, &parse.StringNode{NodeType: parse.NodeString, Pos: pos, Quoted: strconv.Quote(k), Text: k})
	}
	return &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand, Pos: pos, Args: args}}}
}

// lookupField follows keys from v, a tree.Value or the header/footer map,
// and returns a value templates can print, compare and range over; "" when
// any step is missing or not an object.
func lookupField(v any, keys ...string) any {
	for _, k := range keys {
		switch x := v.(type) {
		case tree.Value:
			m, ok := x.Get(k)
			if !ok {
				return ""
			}
			v = m
		case map[string]any:
			m, ok := x[k]
			if !ok {
				return ""
			}
			v = m
		default:
			return ""
		}
	}
	if tv, ok := v.(tree.Value); ok {
		return templateValue(tv)
	}
	return v
}

// jsonArray prints as compact JSON and ranges as a slice.
type jsonArray []tree.Value

func (a jsonArray) String() string { return tree.Array(a...).String() }

func templateValue(v tree.Value) any {
	switch v.Kind() {
	case tree.KindNull:
		return ""
	case tree.KindBool:
		return v.Bool()
	case tree.KindNumber:
		lit := v.Num()
		if i, err := strconv.ParseInt(lit, 10, 64); err == nil && strconv.FormatInt(i, 10) == lit {
			return i
		}
		return lit
	case tree.KindString:
		return v.Str()
	case tree.KindArray:
		return jsonArray(v.Items())
	}
	return v // an object prints as compact JSON
}

// render executes the templates over items. total is the item count
// before filtering.
func (c *compactRule) render(items []tree.Value, total int) (string, error) {
	var buf bytes.Buffer
	var lines []string
	exec := func(t *template.Template, data any) error {
		buf.Reset()
		if err := t.Execute(&buf, data); err != nil {
			return err
		}
		lines = append(lines, strings.TrimRight(buf.String(), "\n"))
		return nil
	}
	meta := map[string]any{"Total": total, "Count": len(items), "Remaining": total - len(items)}
	if c.header != nil {
		if err := exec(c.header, meta); err != nil {
			return "", err
		}
	}
	for _, it := range items {
		var data any = it
		if it.Kind() != tree.KindObject {
			data = templateValue(it)
		}
		if err := exec(c.item, data); err != nil {
			return "", err
		}
	}
	if c.footer != nil {
		if err := exec(c.footer, meta); err != nil {
			return "", err
		}
	}
	return strings.Join(lines, "\n"), nil
}
