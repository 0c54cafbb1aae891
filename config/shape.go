package config

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/terse-dev/terse/shape"
)

// Shape configures the shaping of text results (package shape): numbered
// file reads, path lists, search results, shell and test output.
type Shape struct {
	// Enabled turns shaping on (the default).
	Enabled bool `toml:"enabled"`
	// Class is the most a shaping may change: "lossless", "display" or
	// "elide" (the default).
	Class string `toml:"class"`
	// Margin is the least share of a result's tokens a shaping must save
	// to be used (0: shape.DefaultMargin).
	Margin float64 `toml:"margin"`
	// MinBytes: shorter results are left as they are (0:
	// shape.DefaultMinBytes).
	MinBytes int `toml:"min_bytes"`
	// Tools are per-tool rules; the first whose glob matches applies.
	Tools []ShapeTool `toml:"tools"`
	// ReadForm is how the numbers of a numbered file read are written:
	// "gutter" (the default: every number, unpadded), "tab" (the same,
	// with a tab instead of the gutter's "→"), "sparse" (the
	// first, the last and every 10th line's only) or "range" (the range
	// declared once, no numbers). The last two are lossless too but
	// change what a model must work out to name a line.
	ReadForm string `toml:"read_form"`
	// PassLines are patterns of test runners' pass lines the built-in
	// ones do not know: such lines are folded into counts of Unit.
	PassLines []ShapePassLine `toml:"pass_lines"`
}

// ShapePassLine is a pattern (Go regexp syntax) of lines that report
// only success, and the unit each counts one of ("specs passed").
type ShapePassLine struct {
	Pattern string `toml:"pattern"`
	Unit    string `toml:"unit"`
}

// ShapeTool is the shaping policy of the tools whose names match Match.
type ShapeTool struct {
	Match   string  `toml:"match"`
	Enabled *bool   `toml:"enabled"` // nil: on
	Class   string  `toml:"class"`   // "": the [shape] class
	Margin  float64 `toml:"margin"`  // 0: the [shape] margin
}

// ShapeClasses are the values of shape.class.
var ShapeClasses = []string{"lossless", "display", "elide"}

// Options returns the shaping options (nil when shaping is off). The
// configuration must be valid.
func (s *Shape) Options() *shape.Options {
	if !s.Enabled {
		return nil
	}
	o := &shape.Options{Margin: s.Margin, MinBytes: s.MinBytes, ReadForm: s.ReadForm}
	o.Ceiling, _ = shape.ParseClass(s.Class)
	for _, t := range s.Tools {
		r := shape.ToolRule{Match: t.Match, Off: t.Enabled != nil && !*t.Enabled, Margin: t.Margin}
		if t.Class != "" {
			r.Ceiling, _ = shape.ParseClass(t.Class)
		}
		o.Tools = append(o.Tools, r)
	}
	for _, p := range s.PassLines {
		re, err := regexp.Compile(p.Pattern)
		if err == nil {
			o.PassLines = append(o.PassLines, shape.PassLine{Pattern: re, Unit: p.Unit})
		}
	}
	return o
}

func (v *validator) shape(s *Shape) {
	if s.Class != "" {
		v.oneOf("shape.class", s.Class, ShapeClasses)
	}
	if s.Margin < 0 || s.Margin >= 1 {
		v.errorf("shape.margin", "must be in [0, 1), got %g", s.Margin)
	}
	v.nonNegative("shape.min_bytes", s.MinBytes)
	if s.ReadForm != "" {
		v.oneOf("shape.read_form", s.ReadForm, shape.ReadForms)
	}
	for i, t := range s.Tools {
		k := "shape.tools." + strconv.Itoa(i)
		if t.Match == "" {
			v.errorf(k+".match", "must not be empty")
		} else if _, err := path.Match(t.Match, ""); err != nil {
			v.errorf(k+".match", "bad glob %q", t.Match)
		}
		if t.Class != "" {
			v.oneOf(k+".class", t.Class, ShapeClasses)
		}
		if t.Margin < 0 || t.Margin >= 1 {
			v.errorf(k+".margin", "must be in [0, 1), got %g", t.Margin)
		}
	}
	for i, p := range s.PassLines {
		k := "shape.pass_lines." + strconv.Itoa(i)
		if _, err := regexp.Compile(p.Pattern); err != nil || p.Pattern == "" {
			v.errorf(k+".pattern", "not a regular expression: %q", p.Pattern)
		}
		if p.Unit == "" || len(p.Unit) > 40 || strings.ContainsAny(p.Unit, "()[]\n;") {
			v.errorf(k+".unit", "want a short unit such as \"specs passed\", got %q", p.Unit)
		}
	}
}
