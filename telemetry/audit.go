package telemetry

import (
	"iter"
	"os"
	"path/filepath"
	"strings"
)

// Leak is a run of source bytes found in a telemetry file.
type Leak struct {
	Text   string // the run, Window bytes long
	Source string // the source it came from
	File   string // the telemetry file it appears in (base name)
}

// Window is the length of the runs Audit looks for: a string of 12 bytes
// or more from the content terse handled must never reach a telemetry
// file.
const Window = 12

// Audit checks the telemetry files in dir against sources (name and
// content of everything the entry points handled) and returns every
// distinct Window-byte run of a source that appears in a telemetry file.
// A run inside the schema's own words ([Vocabulary], quoted as written)
// is not content and is allowed. It also returns how many telemetry files
// it read.
func Audit(dir string, sources iter.Seq2[string, []byte]) (leaks []Leak, files int, err error) {
	windows := map[string]string{} // run → telemetry file
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		return nil, 0, err
	}
	for _, f := range names {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, 0, err
		}
		for i := 0; i+Window <= len(data); i++ {
			windows[string(data[i:i+Window])] = filepath.Base(f)
		}
	}
	var vocab strings.Builder
	for _, w := range Vocabulary() {
		vocab.WriteString(`,"` + w + `":"` + w + `"` + "\n")
	}
	// A field and one of its enumerated values, as encoded.
	for key, values := range enumerated() {
		for _, w := range values {
			vocab.WriteString(`,"` + key + `":"` + w + `","` + "\n")
		}
	}
	schema := vocab.String()
	seen := map[string]bool{}
	for name, data := range sources {
		for i := 0; i+Window <= len(data); i++ {
			w := string(data[i : i+Window])
			if tf, ok := windows[w]; ok && !seen[w] && !strings.Contains(schema, w) {
				seen[w] = true
				leaks = append(leaks, Leak{Text: w, Source: name, File: tf})
			}
		}
	}
	return leaks, len(names), nil
}
