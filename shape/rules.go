package shape

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/terse-dev/terse/inband"
)

// gutter is a line-number prefix: the number right-aligned in width
// columns, then sep.
type gutter struct {
	sep   string
	width int
}

// gutters are the numbered-line forms a read shaping knows: Claude
// Code's Read ("%6d→") and cat -n / nl ("%6d\t").
var gutters = []gutter{{"→", 6}, {"\t", 6}}

// digits returns the length of the run of ASCII digits at the start of s.
func digits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// unpad writes every line numbered with g without its padding, and with
// the separator to instead of g's. It needs at least three numbered
// lines.
func unpad(lines []string, g gutter, to string) (string, []string, bool) {
	out := make([]string, len(lines))
	var ar arena
	if to != g.sep {
		ar.reserve(size(lines), len(lines))
	}
	n := 0
	for i, l := range lines {
		out[i] = l
		sp := spaces(l)
		d := digits(l[sp:])
		if sp == 0 || d == 0 || sp+d != g.width || !strings.HasPrefix(l[sp+d:], g.sep) {
			continue
		}
		if to == g.sep {
			out[i] = l[sp:]
		} else {
			ar.line(i, l[sp:sp+d], to, l[sp+d+len(g.sep):])
		}
		n++
	}
	if n < 3 {
		return "", nil, false
	}
	ar.fill(out)
	return unpadRule(g, to), out, true
}

func invertUnpad(u inband.Unpadded, lines []string) ([]string, error) {
	sep, to, width := u.Sep, u.To, u.Width
	out := make([]string, len(lines))
	var ar arena
	ar.reserve(size(lines)+len(lines)*width, len(lines))
	for i, l := range lines {
		out[i] = l
		if d := digits(l); d > 0 && d < width && strings.HasPrefix(l[d:], to) {
			ar.line(i, pad(width-d), l[:d]+sep, l[d+len(to):])
		}
	}
	ar.fill(out)
	return out, nil
}

// verifyUnpad reports whether invertUnpad(u, out) equals in, without
// building it.
func verifyUnpad(u inband.Unpadded, out, in []string) bool {
	sep, to, width := u.Sep, u.To, u.Width
	if len(out) != len(in) {
		return false
	}
	for i, l := range out {
		want := in[i]
		if d := digits(l); d > 0 && d < width && strings.HasPrefix(l[d:], to) {
			p := width - d
			rest := l[d+len(to):]
			if len(want) != p+d+len(sep)+len(rest) || spaces(want[:p]) != p || want[p:p+d] != l[:d] || want[p+d:p+d+len(sep)] != sep || want[p+d+len(sep):] != rest {
				return false
			}
		} else if l != want {
			return false
		}
	}
	return true
}

// verifyRelative reports whether invertRelative(base, out) equals in,
// without building it.
func verifyRelative(base string, out, in []string) bool {
	if !strings.HasSuffix(base, "/") || len(out) != len(in) {
		return false
	}
	for i, l := range out {
		want := in[i]
		k := indent(l)
		if strings.HasPrefix(l[k:], "./") {
			if len(want) != len(l)-2+len(base) || want[:k] != l[:k] || want[k:k+len(base)] != base || want[k+len(base):] != l[k+2:] {
				return false
			}
		} else if l != want {
			return false
		}
	}
	return true
}

// verifyFold reports whether invertFold(out) equals in, without
// building it.
func verifyFold(out, in []string) bool {
	j := 0
	for i, l := range out {
		n, ok := foldCount(l)
		if !ok {
			if j >= len(in) || in[j] != l {
				return false
			}
			j++
			continue
		}
		if i == 0 || n > len(in)-j {
			return false
		}
		prev := in[j-1]
		for range n {
			if in[j] != prev {
				return false
			}
			j++
		}
	}
	return j == len(in)
}

// verify reports whether undoing rule r on out gives in, and returns the
// rule as read back from its wording.
func verify(r string, out, in []string) (inband.Rule, bool) {
	rule, err := inband.ParseRule(r)
	if err != nil {
		return nil, false
	}
	switch x := rule.(type) {
	case inband.Named:
		if x == inband.RepeatsFolded {
			return rule, verifyFold(out, in)
		}
	case inband.PathTree:
		return rule, verifyTree(x, out, in)
	case inband.ReadForm:
		return rule, verifyForm(x, out, in)
	case inband.Relative:
		return rule, verifyRelative(x.Base, out, in)
	case inband.Unpadded:
		return rule, verifyUnpad(x, out, in)
	}
	back, err := invert(r, out, 0)
	return rule, err == nil && equalLines(back, in)
}

// indent returns the length of the spaces and tabs that open l.
func indent(l string) int {
	i := 0
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	return i
}

// pathEnd is the set of bytes that end a path at the start of a line.
var pathEnd = [256]bool{' ': true, '\t': true, ':': true, '"': true, '\'': true, '(': true, ')': true, ',': true}

// relative writes a base directory at the start of lines (after their
// indentation) as "./": the working directory when at least two lines
// open with it, else the deepest directory that opens every line that
// opens with an absolute path (at least three of them, two levels deep).
func relative(lines []string, workDir string) (string, []string, bool) {
	base := relBase(lines, workDir)
	if base == "" {
		return "", nil, false
	}
	return relApply(lines, base)
}

// relBase is the base relative writes as "./", or "".
func relBase(lines []string, workDir string) string {
	for _, l := range lines {
		if strings.HasPrefix(l[indent(l):], "./") {
			return "" // "./" already means something here
		}
	}
	count := func(base string) int {
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l[indent(l):], base) {
				n++
			}
		}
		return n
	}
	base := ""
	if workDir != "" && filepath.IsAbs(workDir) {
		b := strings.TrimRight(workDir, "/") + "/"
		if b != "/" && count(b) >= 2 {
			base = b
		}
	}
	if base == "" {
		common, n := "", 0
		for _, l := range lines {
			s := l[indent(l):]
			if !strings.HasPrefix(s, "/") {
				continue
			}
			for k := 0; k < len(s); k++ {
				if pathEnd[s[k]] {
					s = s[:k]
					break
				}
			}
			dir := s[:strings.LastIndexByte(s, '/')+1]
			if n == 0 {
				common = dir
			} else {
				for !strings.HasPrefix(dir, common) {
					common = common[:strings.LastIndexByte(common[:len(common)-1], '/')+1]
				}
			}
			n++
		}
		if n >= 3 && strings.Count(common, "/") >= 3 {
			base = common
		}
	}
	return base
}

// relApply writes base at the start of lines (after their indentation)
// as "./".
func relApply(lines []string, base string) (string, []string, bool) {
	out := make([]string, len(lines))
	var ar arena
	ar.reserve(size(lines), len(lines))
	for i, l := range lines {
		k := indent(l)
		if strings.HasPrefix(l[k:], base) {
			ar.line(i, l[:k], "./", l[k+len(base):])
		} else {
			out[i] = l
		}
	}
	ar.fill(out)
	return relRule(base), out, true
}

func invertRelative(r inband.Relative, lines []string) ([]string, error) {
	base := r.Base
	if !strings.HasSuffix(base, "/") {
		return nil, fmt.Errorf("bad rule %q", r)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		k := indent(l)
		if strings.HasPrefix(l[k:], "./") {
			out[i] = l[:k] + base + l[k+2:]
		} else {
			out[i] = l
		}
	}
	return out, nil
}

// region is the part of lines [a, b) a tree or grouping applies to: from
// a to the end, less a final empty line (the text's last newline).
func region(lines []string, a int) int {
	b := len(lines)
	if b > a && lines[b-1] == "" {
		b--
	}
	return b
}

// tree writes a path list as an order-keeping tree: a first line that is
// not a path (Grep's "Found 12 files") is kept as it is.
func tree(lines []string) (string, []string, bool) {
	a := 0
	if len(lines) > 0 && !strings.Contains(lines[0], "/") {
		a = 1
	}
	b := region(lines, a)
	if b-a < 3 {
		return "", nil, false
	}
	for _, l := range lines[a:b] {
		if l == "" || l[0] == ' ' || l[0] == '\t' {
			return "", nil, false
		}
	}
	out := make([]string, 0, b-a+b/4+1)
	out = append(out, lines[:a]...)
	var ar arena
	ar.reserve(size(lines[a:b])+2*(b-a), b-a+b/4+1)
	out = emitTree(out, &ar, lines[a:b], 0, 0)
	out = append(out, lines[b:]...)
	ar.fill(out)
	return treeRule(a + 1), out, true
}

// indentation is the indentation of the lines of a tree, for depths up
// to its length.
const indentation = "                                                                "

// pad returns depth spaces.
func pad(depth int) string {
	if depth <= len(indentation) {
		return indentation[:depth]
	}
	return strings.Repeat(" ", depth)
}

// emitTree writes paths (less their first skip bytes) at depth:
// consecutive paths that share their first directory are written under
// one line that opens the directories all of them share (whole
// components, each path keeping a part after it). Lines that are not a
// path as it is are built in ar.
func emitTree(out []string, ar *arena, paths []string, skip, depth int) []string {
	emit := func(p string) {
		if depth == 0 {
			out = append(out, p)
			return
		}
		ar.line(len(out), pad(depth), p, "")
		out = append(out, "")
	}
	for i := 0; i < len(paths); {
		p := paths[i][skip:]
		j := i + 1
		first := ""
		if k := strings.IndexByte(p, '/'); k >= 0 {
			first = p[:k+1]
			for j < len(paths) && strings.HasPrefix(paths[j][skip:], first) {
				j++
			}
		}
		if j-i == 1 {
			emit(p)
			i = j
			continue
		}
		k := len(first)
		for {
			n := strings.IndexByte(p[k:], '/')
			if n < 0 {
				break
			}
			cand := p[:k+n+1]
			same := true
			for _, q := range paths[i:j] {
				q = q[skip:]
				if len(q) <= len(cand) || !strings.HasPrefix(q, cand) {
					same = false
					break
				}
			}
			if !same {
				break
			}
			k = len(cand)
		}
		emit(p[:k])
		out = emitTree(out, ar, paths[i:j], skip+k, depth+1)
		i = j
	}
	return out
}

func spaces(l string) int {
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	return i
}

func invertTree(r inband.PathTree, lines []string, first int) ([]string, error) {
	a, b, err := treeRegion(r, lines, first)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(lines))
	out = append(out, lines[:a]...)
	var ar arena
	ar.reserve(2*size(lines[a:b]), b-a)
	err = walkTree(lines, a, b, first, func(prefix, seg string) bool {
		if prefix == "" {
			out = append(out, seg)
		} else {
			ar.line(len(out), prefix, seg, "")
			out = append(out, "")
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	out = append(out, lines[b:]...)
	ar.fill(out)
	return out, nil
}

// verifyTree reports whether invertTree(r, out) equals in, without
// building it.
func verifyTree(r inband.PathTree, out, in []string) bool {
	a, b, err := treeRegion(r, out, 0)
	if err != nil || a > len(in) || !equalLines(out[:a], in[:a]) {
		return false
	}
	j := a
	err = walkTree(out, a, b, 0, func(prefix, seg string) bool {
		if j >= len(in) || len(in[j]) != len(prefix)+len(seg) || !strings.HasPrefix(in[j], prefix) || in[j][len(prefix):] != seg {
			return false
		}
		j++
		return true
	})
	return err == nil && len(in)-j == len(out)-b && equalLines(out[b:], in[j:])
}

// treeRegion is where the tree of a tree rule is: lines [a, b).
func treeRegion(r inband.PathTree, lines []string, first int) (a, b int, err error) {
	a = r.First - 1
	if a > len(lines) {
		return 0, 0, &ExpandError{Line: first + len(lines), Col: 1, Msg: "the tree starts after the last line"}
	}
	return a, region(lines, a), nil
}

// errStop stops a tree walk.
var errStop = errors.New("stop")

// walkTree calls path with each path of the tree in lines [a, b), as the
// open directories' prefix and the line's own part, until it returns
// false.
func walkTree(lines []string, a, b, first int, path func(prefix, seg string) bool) error {
	// stack holds the length of the open prefix at each depth.
	var stack []int
	prefix := ""
	for i := a; i < b; i++ {
		l := lines[i]
		d := spaces(l)
		if d > len(stack) {
			return &ExpandError{Line: first + i, Col: 1, Msg: fmt.Sprintf("indented %d levels under %d open directories", d, len(stack))}
		}
		if d < len(stack) {
			prefix = prefix[:stack[d]]
			stack = stack[:d]
		}
		seg := l[d:]
		if strings.HasSuffix(seg, "/") && i+1 < b && spaces(lines[i+1]) == d+1 {
			stack = append(stack, len(prefix))
			prefix += seg
			continue
		}
		if !path(prefix, seg) {
			return errStop
		}
	}
	return nil
}

// matchPath returns the path of a search result line "path:12:text" and
// the length of the path, or -1.
func matchPath(l string) int {
	for k := 0; k < len(l); k++ {
		k2 := strings.IndexByte(l[k:], ':')
		if k2 < 0 {
			return -1
		}
		k += k2
		if d := digits(l[k+1:]); d > 0 && k+1+d < len(l) && l[k+1+d] == ':' && k > 0 {
			// A path: no spaces, a directory or an extension (not a
			// timestamp's "10:02:").
			if p := l[:k]; !strings.ContainsAny(p, " \t") && strings.ContainsAny(p, "/.") {
				return k
			}
			return -1
		}
	}
	return -1
}

// group writes runs of search results of one file under a line holding
// the file's path.
func group(lines []string) (string, []string, bool) {
	b := region(lines, 0)
	paths := make([]string, b) // the path of each result line, or ""
	for i, l := range lines[:b] {
		if k := matchPath(l); k > 0 {
			paths[i] = l[:k]
		}
	}
	// Context lines: "path-13-text" next to a result of path.
	isCtx := func(l, p string) bool {
		if p == "" || !strings.HasPrefix(l, p+"-") {
			return false
		}
		d := digits(l[len(p)+1:])
		return d > 0 && len(l) > len(p)+1+d && l[len(p)+1+d] == '-'
	}
	for changed := true; changed; {
		changed = false
		for i := range paths {
			if paths[i] != "" {
				continue
			}
			if i > 0 && isCtx(lines[i], paths[i-1]) {
				paths[i], changed = paths[i-1], true
			} else if i+1 < b && isCtx(lines[i], paths[i+1]) {
				paths[i], changed = paths[i+1], true
			}
		}
	}
	out := make([]string, 0, len(lines)+len(lines)/2)
	var ar arena
	ar.reserve(size(lines[:b])+b, b)
	grouped := 0
	for i := 0; i < b; {
		j := i + 1
		for paths[i] != "" && j < b && paths[j] == paths[i] {
			j++
		}
		if j-i < 2 {
			out = append(out, lines[i])
			i = j
			continue
		}
		p := paths[i]
		out = append(out, p)
		for _, l := range lines[i:j] {
			ar.line(len(out), " ", l[len(p)+1:], "")
			out = append(out, "")
		}
		grouped += j - i
		i = j
	}
	if grouped < 3 {
		return "", nil, false
	}
	out = append(out, lines[b:]...)
	ar.fill(out)
	return ruleGroup, out, true
}

// isGrouped reports whether l is a grouped result line " 12:text".
func isGrouped(l string) bool {
	if len(l) < 3 || l[0] != ' ' {
		return false
	}
	d := digits(l[1:])
	return d > 0 && 1+d < len(l) && (l[1+d] == ':' || l[1+d] == '-')
}

func invertGroup(lines []string, first int) ([]string, error) {
	out := make([]string, 0, len(lines))
	var ar arena
	ar.reserve(2*size(lines), len(lines))
	head := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if isGrouped(l) {
			if head == "" {
				return nil, &ExpandError{Line: first + i, Col: 1, Msg: "a grouped result line with no file line above it"}
			}
			d := digits(l[1:])
			ar.line(len(out), head, l[1+d:2+d], l[1:])
			out = append(out, "")
			continue
		}
		head = ""
		if i+1 < len(lines) && isGrouped(lines[i+1]) && l != "" {
			head = l
			continue
		}
		out = append(out, l)
	}
	ar.fill(out)
	return out, nil
}

// fold writes each run of at least three identical lines once, followed
// by a marker counting the rest, when that is shorter. The markers are
// built in one allocation.
func fold(lines []string) (string, []string, bool) {
	// foldable is the count of the repeats of the run at i that a marker
	// stands for (0: the run is written as it is), and the end of the run.
	foldable := func(i int) (n, j int) {
		j = i + 1
		for j < len(lines) && lines[j] == lines[i] {
			j++
		}
		k := j - i
		if k >= 3 && (k-1)*(len(lines[i])+1) > foldMarkerLen(k-1)+1 {
			return k - 1, j
		}
		return 0, j
	}
	markers, bytes := 0, 0
	for i := 0; i < len(lines); {
		n, j := foldable(i)
		if n > 0 {
			markers++
			bytes += foldMarkerLen(n)
		}
		i = j
	}
	if markers == 0 {
		return "", nil, false
	}
	out := make([]string, 0, len(lines))
	var ar arena
	ar.reserve(bytes, markers)
	for i := 0; i < len(lines); {
		n, j := foldable(i)
		if n > 0 {
			out = append(out, lines[i], "")
			ar.repeat(len(out)-1, n)
		} else {
			out = append(out, lines[i:j]...)
		}
		i = j
	}
	ar.fill(out)
	return ruleFold, out, true
}

// maxExpand bounds what one fold marker may expand to.
const maxExpand = 1 << 28

func invertFold(lines []string, first int) ([]string, error) {
	var out []string
	size := 0
	for i, l := range lines {
		n, ok := foldCount(l)
		if !ok {
			out = append(out, l)
			size += len(l) + 1
			continue
		}
		if len(out) == 0 {
			return nil, &ExpandError{Line: first + i, Col: 1, Msg: "a fold marker with no line above it"}
		}
		prev := out[len(out)-1]
		if size += n * (len(prev) + 1); size > maxExpand {
			return nil, &ExpandError{Line: first + i, Col: 1, Msg: "a fold marker expands to more than 256 MB"}
		}
		for range n {
			out = append(out, prev)
		}
	}
	return out, nil
}

// invert undoes one rule on the body lines; first is the line number (in
// the whole text) of lines[0], for errors.
func invert(r string, lines []string, first int) ([]string, error) {
	rule, err := inband.ParseRule(r)
	if err != nil {
		return nil, err
	}
	switch x := rule.(type) {
	case inband.Named:
		switch x {
		case inband.Grouped:
			return invertGroup(lines, first)
		case inband.RepeatsFolded:
			return invertFold(lines, first)
		}
		return lines, nil // the terminal view
	case inband.PathTree:
		return invertTree(x, lines, first)
	case inband.Relative:
		return invertRelative(x, lines)
	case inband.Unpadded:
		return invertUnpad(x, lines)
	case inband.ReadForm:
		return invertForm(x, lines, first)
	}
	return nil, fmt.Errorf("unknown rule %q", r)
}

// Read forms (Options.ReadForm): how the numbers of a numbered read are
// written.
const (
	// ReadGutter (the default) keeps every line's number, unpadded.
	ReadGutter = "gutter"
	// ReadSparse shows the number of the first line, the last line and
	// every 10th line only.
	ReadSparse = "sparse"
	// ReadRange declares the range of the lines once and shows no
	// numbers.
	ReadRange = "range"
	// ReadTab keeps every line's number, unpadded, followed by a tab
	// (cat -n's separator) instead of the gutter's.
	ReadTab = "tab"
)

// ReadForms lists the read forms.
var ReadForms = []string{ReadGutter, ReadTab, ReadSparse, ReadRange}

// numbered returns the number of a line numbered with g (padded to
// g.width) and the length of its gutter, or ok false.
func numbered(l string, g gutter) (n, gl int, ok bool) {
	sp := 0
	for sp < len(l) && l[sp] == ' ' {
		sp++
	}
	d := digits(l[sp:])
	if d == 0 || sp+d != g.width || !strings.HasPrefix(l[sp+d:], g.sep) || (d > 1 && l[sp] == '0') || d > 9 {
		return 0, 0, false
	}
	n, _ = strconv.Atoi(l[sp : sp+d])
	return n, sp + d + len(g.sep), true
}

// sparseShown reports whether the sparse form shows number k of a run
// first–last.
func sparseShown(k, first, last int) bool {
	return k == first || k == last || k%10 == 0
}

// readForm writes the run of consecutively numbered lines that opens
// lines (at least three) in form (ReadSparse or ReadRange). The sparse
// form is not used when a line it leaves unnumbered would read as a
// numbered one.
func readForm(lines []string, g gutter, form string) (string, []string, bool) {
	first, _, ok := numbered(lines[0], g)
	if !ok {
		return "", nil, false
	}
	n := 1
	for n < len(lines) {
		k, _, ok := numbered(lines[n], g)
		if !ok || k != first+n {
			break
		}
		n++
	}
	if n < 3 {
		return "", nil, false
	}
	last := first + n - 1
	out := make([]string, len(lines))
	copy(out[n:], lines[n:])
	var ar arena
	if form == ReadSparse {
		ar.reserve(n/10*(len(g.sep)+10), n/10+2)
	}
	for i, l := range lines[:n] {
		_, gl, _ := numbered(l, g)
		content := l[gl:]
		k := first + i
		switch {
		case form == ReadSparse && sparseShown(k, first, last):
			ar.numbered(i, k, 0, g.sep, content)
		case form == ReadSparse:
			if d := digits(content); d > 0 && strings.HasPrefix(content[d:], g.sep) {
				return "", nil, false
			}
			out[i] = content
		default:
			out[i] = content
		}
	}
	ar.fill(out)
	return formRule(form, first, last, g), out, true
}

// invertForm gives the numbers of a read form back.
func invertForm(f inband.ReadForm, lines []string, first int) ([]string, error) {
	n := f.Last - f.First + 1
	if n > len(lines) {
		return nil, &ExpandError{Line: first + len(lines), Col: 1, Msg: fmt.Sprintf("the rule names %d numbered lines, the text has %d", n, len(lines))}
	}
	out := make([]string, len(lines))
	copy(out[n:], lines[n:])
	var ar arena
	ar.reserve(size(lines[:n])+n*(f.Width+len(f.Sep)), n)
	for i, l := range lines[:n] {
		k := f.First + i
		if content, ok := formContent(f, k, l); ok {
			ar.numbered(i, k, f.Width, f.Sep, content)
		} else {
			return nil, &ExpandError{Line: first + i, Col: 1, Msg: fmt.Sprintf("line %d does not show its number %d", first+i, k)}
		}
	}
	ar.fill(out)
	return out, nil
}

// formContent is the content of body line l, number k, of a read form:
// l less its shown number. ok is false when a number it must show is not
// there.
func formContent(f inband.ReadForm, k int, l string) (string, bool) {
	if !f.Sparse || !sparseShown(k, f.First, f.Last) {
		return l, true
	}
	var b [20]byte
	num := strconv.AppendInt(b[:0], int64(k), 10)
	if len(l) < len(num)+len(f.Sep) || l[:len(num)] != string(num) || l[len(num):len(num)+len(f.Sep)] != f.Sep {
		return "", false
	}
	return l[len(num)+len(f.Sep):], true
}

// verifyForm reports whether invertForm(f, out) equals in, without
// building it.
func verifyForm(f inband.ReadForm, out, in []string) bool {
	n := f.Last - f.First + 1
	if n > len(out) || len(out) != len(in) || !equalLines(out[n:], in[n:]) {
		return false
	}
	var b [20]byte
	for i, l := range out[:n] {
		k := f.First + i
		content, ok := formContent(f, k, l)
		num := strconv.AppendInt(b[:0], int64(k), 10)
		p := max(f.Width-len(num), 0)
		w := in[i]
		if !ok || len(w) != p+len(num)+len(f.Sep)+len(content) || spaces(w[:p]) != p || w[p:p+len(num)] != string(num) ||
			w[p+len(num):p+len(num)+len(f.Sep)] != f.Sep || w[p+len(num)+len(f.Sep):] != content {
			return false
		}
	}
	return true
}
