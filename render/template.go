package render

import "github.com/terse-dev/terse/tree"

// Template is a per-tool encoding preset (the L1 templates of the layered
// pipeline), selected by name in configuration. A template only steers the
// auto encoder; its output is an ordinary auto document, decoded by
// [Decode] and verified like any other.
type Template struct {
	Name Format
	Doc  string
	// Applies reports whether the template fits v; when it does not,
	// Encode uses plain auto.
	Applies func(v tree.Value) bool
	// Adjust changes the options for v.
	Adjust func(o *Options)
}

// MRDiffFence and CIPipeline name the JSON templates; [CSVFromMD] is the
// Markdown one.
const (
	MRDiffFence Format = "mr_diff_fence"
	CIPipeline  Format = "ci_pipeline"
)

// Templates lists the JSON templates.
var Templates = []Template{
	{
		Name: MRDiffFence,
		Doc: "merge-request diffs: every \"diff\" string is a fenced diff block, " +
			"all other fields kept as key: value lines",
		Applies: func(v tree.Value) bool {
			found := false
			tree.Walk(v, func(_ tree.Pointer, x tree.Value) bool {
				if d, ok := x.Get("diff"); ok && x.Kind() == tree.KindObject && d.Kind() == tree.KindString {
					found = true
				}
				return !found
			})
			return found
		},
		Adjust: func(o *Options) { o.FenceKeys = append(o.FenceKeys, "diff", "patch") },
	},
	{
		Name: CIPipeline,
		Doc: "CI pipelines, jobs and runs: logs and traces as fenced blocks, " +
			"repeated users and repositories in the legend, URL prefixes declared",
		Applies: func(v tree.Value) bool {
			found := false
			tree.Walk(v, func(_ tree.Pointer, x tree.Value) bool {
				if x.Kind() == tree.KindObject && x.Has("status") {
					for _, k := range []string{"jobs", "builds", "stages", "pipeline", "workflow_runs", "check_runs", "steps", "conclusion"} {
						if x.Has(k) {
							found = true
						}
					}
				}
				return !found
			})
			return found
		},
		Adjust: func(o *Options) {
			o.FenceKeys = append(o.FenceKeys, "log", "logs", "trace", "output", "script", "stdout", "stderr")
		},
	},
}

// TemplateByName returns the JSON template called name.
func TemplateByName(name Format) (Template, bool) {
	for _, t := range Templates {
		if t.Name == name {
			return t, true
		}
	}
	return Template{}, false
}
