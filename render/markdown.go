package render

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
)

// CSVFromMD is the name of the Markdown-table template.
const CSVFromMD Format = "csv_from_md"

// mdTable is one Markdown table: header cells, column alignments ('l',
// 'c', 'r' or '-') and rows, each cell trimmed of its padding.
type mdTable struct {
	head  []string
	align []byte
	rows  [][]string
}

// mdBlock is either verbatim text lines or a table.
type mdBlock struct {
	lines []string
	table *mdTable
}

// splitCells splits a table line into trimmed cells. An escaped pipe \|
// stays in its cell.
func splitCells(l string) []string {
	l = strings.TrimSpace(l)
	l = strings.TrimPrefix(l, "|")
	if strings.HasSuffix(l, "|") && !strings.HasSuffix(l, `\|`) {
		l = l[:len(l)-1]
	}
	var cells []string
	start := 0
	for i := 0; i < len(l); i++ {
		if l[i] == '\\' {
			i++
			continue
		}
		if l[i] == '|' {
			cells = append(cells, strings.TrimSpace(l[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(l[start:]))
}

func isTableLine(l string) bool {
	t := strings.TrimSpace(l)
	return len(t) >= 2 && t[0] == '|' && t[len(t)-1] == '|'
}

// separatorAlign parses a separator line, returning one alignment per
// column, or nil if l is not a separator.
func separatorAlign(l string) []byte {
	if !isTableLine(l) {
		return nil
	}
	var al []byte
	for _, c := range splitCells(l) {
		if c == "" || strings.Trim(c, ":-") != "" || !strings.Contains(c, "-") {
			return nil
		}
		switch left, right := c[0] == ':', c[len(c)-1] == ':'; {
		case left && right && len(c) > 1:
			al = append(al, 'c')
		case left:
			al = append(al, 'l')
		case right:
			al = append(al, 'r')
		default:
			al = append(al, '-')
		}
	}
	return al
}

func isFenceLine(l string) bool {
	t := strings.TrimLeft(l, " ")
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// parseMarkdown splits text into verbatim lines and tables. Tables inside
// fenced code blocks are text.
func parseMarkdown(text string) []mdBlock {
	lines := strings.Split(text, "\n")
	var blocks []mdBlock
	var cur []string
	inFence := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if isFenceLine(l) {
			inFence = !inFence
		}
		if !inFence && isTableLine(l) && i+1 < len(lines) {
			if al := separatorAlign(lines[i+1]); al != nil && len(al) == len(splitCells(l)) {
				if cur != nil {
					blocks = append(blocks, mdBlock{lines: cur})
					cur = nil
				}
				t := &mdTable{head: splitCells(l), align: al}
				i += 2
				for i < len(lines) && isTableLine(lines[i]) {
					t.rows = append(t.rows, splitCells(lines[i]))
					i++
				}
				i--
				blocks = append(blocks, mdBlock{table: t})
				continue
			}
		}
		cur = append(cur, l)
	}
	if cur != nil {
		blocks = append(blocks, mdBlock{lines: cur})
	}
	return blocks
}

func hasMarkdownTable(text string) bool {
	if !strings.Contains(text, "|") {
		return false
	}
	for _, b := range parseMarkdown(text) {
		if b.table != nil {
			return true
		}
	}
	return false
}

// EqualMarkdown reports whether two Markdown texts hold the same text
// outside tables, line for line, and the same tables: the same header,
// alignments and rows, cell for cell (cell padding is not content).
func EqualMarkdown(a, b string) bool {
	x, y := parseMarkdown(a), parseMarkdown(b)
	return slices.EqualFunc(x, y, func(p, q mdBlock) bool {
		if (p.table == nil) != (q.table == nil) {
			return false
		}
		if p.table == nil {
			return slices.Equal(p.lines, q.lines)
		}
		return slices.Equal(p.table.head, q.table.head) && slices.Equal(p.table.align, q.table.align) &&
			slices.EqualFunc(p.table.rows, q.table.rows, slices.Equal)
	})
}

// EncodeMarkdown rewrites every Markdown table in text as a fenced CSV
// block (the csv_from_md template), keeping every cell and all text
// outside the tables verbatim. ok is false (and text is returned as is)
// when there is no table or the text already holds a ```csv block.
func EncodeMarkdown(text string) (out string, ok bool) {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "```csv") {
			return text, false
		}
	}
	blocks := parseMarkdown(text)
	var b strings.Builder
	found := false
	for i, blk := range blocks {
		if i > 0 {
			b.WriteByte('\n')
		}
		if blk.table == nil {
			b.WriteString(strings.Join(blk.lines, "\n"))
			continue
		}
		found = true
		t := blk.table
		b.WriteString("```csv")
		if slices.ContainsFunc(t.align, func(c byte) bool { return c != '-' }) {
			b.WriteString(" align=")
			b.Write(t.align)
		}
		b.WriteByte('\n')
		writeCSVRow(&b, t.head)
		for _, r := range t.rows {
			writeCSVRow(&b, r)
		}
		b.WriteString("```")
	}
	if !found {
		return text, false
	}
	return b.String(), true
}

func writeCSVRow(b *strings.Builder, cells []string) {
	for i, c := range cells {
		if i > 0 {
			b.WriteByte(',')
		}
		if strings.ContainsAny(c, ",\"\r\n") || strings.HasPrefix(c, "`") || len(cells) == 1 && c == "" {
			b.WriteByte('"')
			b.WriteString(strings.ReplaceAll(c, `"`, `""`))
			b.WriteByte('"')
			continue
		}
		b.WriteString(c)
	}
	b.WriteByte('\n')
}

// DecodeMarkdown turns the output of [EncodeMarkdown] back into Markdown:
// each ```csv block becomes a table again (cells padded with one space,
// alignments as declared). [EqualMarkdown] holds between the result and
// the original text.
func DecodeMarkdown(text string) (string, error) {
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "```csv") {
			out = append(out, l)
			continue
		}
		info := strings.TrimPrefix(l, "```csv")
		var align []byte
		if info != "" {
			if !strings.HasPrefix(info, " align=") {
				return "", &SyntaxError{Line: i + 1, Column: 7, Msg: "malformed csv fence info"}
			}
			align = []byte(info[len(" align="):])
		}
		j := i + 1
		for j < len(lines) && lines[j] != "```" {
			j++
		}
		if j >= len(lines) {
			return "", &SyntaxError{Line: i + 1, Column: 1, Msg: "unclosed ```csv block"}
		}
		r := csv.NewReader(strings.NewReader(strings.Join(lines[i+1:j], "\n")))
		r.FieldsPerRecord = -1
		recs, err := r.ReadAll()
		if err != nil || len(recs) == 0 {
			return "", &SyntaxError{Line: i + 2, Column: 1, Msg: fmt.Sprintf("bad csv table: %v", err)}
		}
		if align == nil {
			align = []byte(strings.Repeat("-", len(recs[0])))
		}
		if len(align) != len(recs[0]) {
			return "", &SyntaxError{Line: i + 1, Column: 7, Msg: "alignment count differs from header"}
		}
		out = append(out, mdRow(recs[0]))
		seps := make([]string, len(align))
		for k, a := range align {
			seps[k] = map[byte]string{'l': ":--", 'c': ":-:", 'r': "--:", '-': "---"}[a]
			if seps[k] == "" {
				return "", &SyntaxError{Line: i + 1, Column: 7, Msg: "unknown alignment"}
			}
		}
		out = append(out, mdRow(seps))
		for _, rec := range recs[1:] {
			out = append(out, mdRow(rec))
		}
		i = j
	}
	return strings.Join(out, "\n"), nil
}

func mdRow(cells []string) string {
	var b strings.Builder
	b.WriteByte('|')
	for _, c := range cells {
		b.WriteByte(' ')
		b.WriteString(c)
		b.WriteString(" |")
	}
	return b.String()
}
