package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/tree"
)

// KimbapRecover is the recovery clause of the notes for kimbap actions:
// kimbap adds an _output_mode parameter to every filtered action, and
// "raw" bypasses its filters.
const KimbapRecover = "call with _output_mode=raw for all"

// Manifest is a kimbap service manifest. Only the response shaping of
// each action is interpreted; the other keys are checked by name and kept
// as YAML nodes.
type Manifest struct {
	Name        string                `yaml:"name"`
	Version     string                `yaml:"version"`
	Description string                `yaml:"description"`
	Actions     map[string]*Action    `yaml:"actions"`
	Other       manifestUninterpreted `yaml:",inline"`

	file string
}

// manifestUninterpreted lists the manifest keys terse accepts without
// reading them.
type manifestUninterpreted struct {
	Adapter     yaml.Node `yaml:"adapter"`
	Aliases     yaml.Node `yaml:"aliases"`
	Auth        yaml.Node `yaml:"auth"`
	BaseURL     yaml.Node `yaml:"base_url"`
	CommandSpec yaml.Node `yaml:"command_spec"`
	Gotchas     yaml.Node `yaml:"gotchas"`
	Recipes     yaml.Node `yaml:"recipes"`
	TargetApp   yaml.Node `yaml:"target_app"`
	Triggers    yaml.Node `yaml:"triggers"`
}

// Action is one manifest action. Only Response is interpreted.
type Action struct {
	Description string              `yaml:"description"`
	Response    *Response           `yaml:"response"`
	Other       actionUninterpreted `yaml:",inline"`

	name string
}

type actionUninterpreted struct {
	Aliases      yaml.Node `yaml:"aliases"`
	Args         yaml.Node `yaml:"args"`
	Auth         yaml.Node `yaml:"auth"`
	Command      yaml.Node `yaml:"command"`
	Idempotent   yaml.Node `yaml:"idempotent"`
	JSONFlag     yaml.Node `yaml:"json_flag"`
	Method       yaml.Node `yaml:"method"`
	Pagination   yaml.Node `yaml:"pagination"`
	Path         yaml.Node `yaml:"path"`
	Request      yaml.Node `yaml:"request"`
	Retry        yaml.Node `yaml:"retry"`
	Risk         yaml.Node `yaml:"risk"`
	SuccessCodes yaml.Node `yaml:"success_codes"`
	Warnings     yaml.Node `yaml:"warnings"`
}

// Response is an action's response block.
type Response struct {
	// Type is "object" or "array".
	Type string `yaml:"type"`
	// Extract is a dotted path to the payload inside the response
	// ("results", "data.issues.nodes"); it becomes the filter root.
	Extract    string          `yaml:"extract"`
	Filter     *ManifestFilter `yaml:"filter"`
	TextFilter *ManifestText   `yaml:"text_filter"`
	Compact    *CompactRules   `yaml:"compact"`

	node *yaml.Node // the response mapping, for positions
}

// ManifestFilter is kimbap's response.filter.
type ManifestFilter struct {
	// Select maps output keys to source paths; order is kept.
	Select    yaml.Node `yaml:"select"`
	Exclude   []string  `yaml:"exclude"`
	MaxItems  int       `yaml:"max_items"`
	DropNulls bool      `yaml:"drop_nulls"`
}

// ManifestText is kimbap's response.text_filter.
type ManifestText struct {
	StripLinesMatching []string `yaml:"strip_lines_matching"`
	KeepLinesMatching  []string `yaml:"keep_lines_matching"`
	MaxLines           int      `yaml:"max_lines"`
	Dedup              bool     `yaml:"dedup"`
	OnEmpty            string   `yaml:"on_empty"`
	StripANSI          bool     `yaml:"strip_ansi"`
}

// LoadManifest reads and validates a kimbap manifest file.
func LoadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseManifest(data, path)
}

// yamlLine matches the "line N: " that yaml.v3 puts in its messages.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// ParseManifest decodes a manifest strictly (unknown keys are errors) and
// validates every action's response block. Errors are [*Error] values,
// several in a [*ValidationError].
func ParseManifest(data []byte, name string) (*Manifest, error) {
	m := &Manifest{file: name}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(m); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(name, err)
	}
	// A second pass keeps the nodes, for the positions of validation
	// errors. (A custom UnmarshalYAML would lose KnownFields below it.)
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err == nil && len(root.Content) > 0 {
		for name, a := range m.Actions {
			if a != nil && a.Response != nil {
				a.Response.node = mappingValue(root.Content[0], "actions", name, "response")
			}
		}
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

func yamlError(name string, err error) error {
	var msgs []string
	if te, ok := errors.AsType[*yaml.TypeError](err); ok {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	var errs []error
	for _, msg := range msgs {
		e := &Error{File: name, Msg: msg}
		if sm := yamlLine.FindStringSubmatch(msg); sm != nil {
			e.Line, _ = strconv.Atoi(sm[1])
			e.Col = 1
			e.Msg = sm[2]
		}
		errs = append(errs, e)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return &ValidationError{Errs: errs}
}

// ActionNames returns the action names, sorted.
func (m *Manifest) ActionNames() []string {
	names := make([]string, 0, len(m.Actions))
	for n := range m.Actions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Action returns the named action, or nil.
func (m *Manifest) Action(name string) *Action {
	a := m.Actions[name]
	if a != nil {
		a.name = name
	}
	return a
}

// HasFilter reports whether the action declares any response shaping.
func (a *Action) HasFilter() bool {
	if a == nil {
		return false
	}
	r := a.Response
	return r != nil && (r.Filter != nil || r.TextFilter != nil || r.Compact != nil)
}

// Validate checks every action's response block as kimbap does (type,
// max_items, select keys and paths, exclude entries, compact.item,
// max_lines, regular expressions) and compiles its filter.
func (m *Manifest) Validate() error {
	var errs []error
	for _, name := range m.ActionNames() {
		a := m.Action(name)
		if a == nil || a.Response == nil {
			continue // an action with no body has nothing to check
		}
		r := a.Response
		at := func(key string, format string, args ...any) {
			var line, col int
			if r.node != nil {
				line, col = r.node.Line, r.node.Column
				if n := mappingKey(r.node, strings.Split(key, ".")...); n != nil {
					line, col = n.Line, n.Column
				}
			}
			errs = append(errs, &Error{File: m.file, Line: line, Col: col,
				Key: "actions." + name + ".response." + key, Msg: fmt.Sprintf(format, args...)})
		}
		if r.Type != "object" && r.Type != "array" {
			at("type", "%q is not object or array", r.Type)
		}
		if r.Filter != nil && r.Filter.Select.Kind != 0 && r.Filter.Select.Kind != yaml.MappingNode {
			at("filter.select", "must be a mapping of output key to source path")
			continue
		}
		if r.Filter != nil {
			s := r.Filter.Select.Content
			for i := 0; i+1 < len(s); i += 2 {
				if s[i].Value == "" || s[i+1].Value == "" || s[i+1].Kind != yaml.ScalarNode {
					line, col := s[i].Line, s[i].Column
					errs = append(errs, &Error{File: m.file, Line: line, Col: col,
						Key: "actions." + name + ".response.filter.select", Msg: "select keys and source paths must be non-empty strings"})
				}
			}
		}
		spec, err := a.FilterSpec()
		if err != nil {
			at("extract", "%v", err)
			continue
		}
		if _, err := filter.Compile(spec); err != nil {
			ce, _ := errors.AsType[*filter.CompileError](err)
			for _, e := range ce.Errs {
				key := "filter"
				msg := e.Error()
				switch {
				case strings.HasPrefix(msg, "text."):
					key = "text_filter"
				case strings.HasPrefix(msg, "compact"):
					key = "compact"
				}
				at(key, "%v", kimbapWording(e))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b error) int { return a.(*Error).Line - b.(*Error).Line })
	return &ValidationError{Errs: errs}
}

// kimbapWording renames terse's text filter fields in messages to the
// manifest's names.
func kimbapWording(err error) string {
	return strings.NewReplacer("text.exclude", "strip_lines_matching", "text.include", "keep_lines_matching",
		"text.head", "max_lines").Replace(err.Error())
}

// mappingKey returns the key node of the last of keys below a mapping.
func mappingKey(n *yaml.Node, keys ...string) *yaml.Node {
	parent := mappingValue(n, keys[:len(keys)-1]...)
	if parent == nil || parent.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(parent.Content); i += 2 {
		if parent.Content[i].Value == keys[len(keys)-1] {
			return parent.Content[i]
		}
	}
	return nil
}

// mappingValue returns the node at keys below a mapping node.
func mappingValue(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
				break
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// FilterSpec converts the action's response block: extract becomes the
// root, filter.select (in file order), exclude, max_items and drop_nulls
// map one to one, text_filter becomes the text spec (strip → exclude,
// keep → include, max_lines → head, dedup → collapse), and compact the
// compact templates. The recovery clause is [KimbapRecover].
func (a *Action) FilterSpec() (filter.Spec, error) {
	s := filter.Spec{Recover: KimbapRecover}
	r := a.Response
	if r == nil {
		return s, nil
	}
	if r.Extract != "" {
		root, err := dottedPointer(r.Extract)
		if err != nil {
			return s, err
		}
		s.Root = root
	}
	if f := r.Filter; f != nil {
		c := f.Select.Content
		for i := 0; i+1 < len(c); i += 2 {
			// kimbap output keys are plain names: escape dots so they are
			// not read as nesting.
			out := strings.NewReplacer(`\`, `\\`, ".", `\.`).Replace(c[i].Value)
			s.Select = append(s.Select, filter.Field{Out: out, Path: c[i+1].Value})
		}
		s.Exclude = slices.Clone(f.Exclude)
		s.MaxItems = f.MaxItems
		s.DropNulls = f.DropNulls
	}
	if t := r.TextFilter; t != nil {
		s.Text = &filter.TextSpec{
			Include:   slices.Clone(t.KeepLinesMatching),
			Exclude:   slices.Clone(t.StripLinesMatching),
			Head:      t.MaxLines,
			Collapse:  t.Dedup,
			StripANSI: t.StripANSI,
			OnEmpty:   t.OnEmpty,
		}
	}
	if c := r.Compact; c != nil {
		s.Compact = &filter.CompactSpec{Header: c.Header, Item: c.Item, Footer: c.Footer}
	}
	return s, nil
}

// dottedPointer turns kimbap's dotted extract path into a JSON Pointer.
func dottedPointer(p string) (string, error) {
	var ptr tree.Pointer
	for _, seg := range strings.Split(p, ".") {
		if seg == "" {
			return "", fmt.Errorf("extract path %q: empty segment", p)
		}
		ptr = ptr.Key(seg)
	}
	return string(ptr), nil
}
