package mcpproxy

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/terse-dev/terse/tree"
)

// outSchema is a tool's outputSchema, resolved for validating the
// structuredContent of chunk replies.
type outSchema struct {
	s  *jsonschema.Schema
	rs *jsonschema.Resolved
}

// resolveSchema resolves an outputSchema; nil when it does not.
func resolveSchema(v tree.Value) *outSchema {
	var s jsonschema.Schema
	if err := json.Unmarshal(tree.AppendJSON(nil, v), &s); err != nil {
		return nil
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
	if err != nil {
		return nil
	}
	return &outSchema{&s, rs}
}

// valid reports whether v validates.
func (o *outSchema) valid(v tree.Value) bool {
	var x any
	if err := json.Unmarshal(tree.AppendJSON(nil, v), &x); err != nil {
		return false
	}
	return o.rs.Validate(x) == nil
}

// fit returns v, or v with the required top-level members it lacks added
// as empty values of their declared type ([] for an array, {} for an
// object, "", 0 or false), when that validates: a chunk of a document's
// members may leave out one the schema requires. ok is false when
// neither validates.
func (o *outSchema) fit(v tree.Value) (tree.Value, bool) {
	if o == nil {
		return v, v.Kind() == tree.KindObject
	}
	if o.valid(v) {
		return v, true
	}
	if v.Kind() != tree.KindObject {
		return v, false
	}
	mems := append([]tree.Member(nil), v.Members()...)
	for _, k := range o.s.Required {
		if v.Has(k) {
			continue
		}
		p := o.s.Properties[k]
		t := ""
		if p != nil {
			t = p.Type
			if t == "" && len(p.Types) > 0 {
				t = p.Types[0]
			}
		}
		var z tree.Value
		switch t {
		case "array":
			z = tree.Array()
		case "object":
			z = tree.Object()
		case "string":
			z = tree.String("")
		case "integer", "number":
			z = tree.Number("0")
		case "boolean":
			z = tree.Bool(false)
		default:
			z = tree.Null()
		}
		mems = append(mems, tree.Member{Key: k, Value: z})
	}
	w := tree.Object(mems...)
	return w, o.valid(w)
}
