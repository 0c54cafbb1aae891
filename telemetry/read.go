package telemetry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Record is one event as read back from a file.
type Record struct {
	V         int            `json:"v"`
	Ms        int64          `json:"ms"`
	Session   string         `json:"sid"`
	Partition int            `json:"part"`
	Sidechain bool           `json:"side"`
	Entry     string         `json:"entry"`
	Class     string         `json:"class"`
	Tool      string         `json:"tool"`
	Shape     string         `json:"shape"`
	Inner     []string       `json:"inner"`
	Depth     int            `json:"depth"`
	Cols      int            `json:"cols"`
	TextShape string         `json:"tshape"`
	TClass    string         `json:"tclass"`
	Tokenizer string         `json:"tok"`
	Format    string         `json:"fmt"`
	BytesIn   int            `json:"b_in"`
	BytesOut  int            `json:"b_out"`
	TokensIn  int            `json:"t_in"`
	TokensOut int            `json:"t_out"`
	Saved     map[string]int `json:"saved"`
	Hints     map[string]int `json:"hints"`
	Dedup     string         `json:"dedup"`
	FP        string         `json:"fp"`
	Chunk     bool           `json:"chunk"`
	Brake     bool           `json:"brake"`
	Compact   int            `json:"compact"`
	LatencyUs int64          `json:"lat_us"`
	Err       string         `json:"err"`
	Skip      string         `json:"skip"`
	Rate      float64        `json:"rate"`
}

// Time is the event's time.
func (r *Record) Time() time.Time { return time.UnixMilli(r.Ms) }

// Weight is how many events this one stands for (1/sample rate).
func (r *Record) Weight() float64 {
	if r.Rate > 0 && r.Rate < 1 {
		return 1 / r.Rate
	}
	return 1
}

// Log is what ReadDir read.
type Log struct {
	Records []Record
	Files   int
	// Skipped counts lines that were not events of this schema
	// (truncated, foreign, or of a newer major version); Old counts
	// events before Since.
	Skipped, Old int
}

// ErrNoDir is returned (wrapped) when the directory does not exist.
var ErrNoDir = errors.New("no telemetry directory")

// ReadDir reads every *.jsonl file of dir (not recursively), in name
// order, keeping events at or after since (zero: all). Unusable lines are
// skipped and counted, never fatal. Records are sorted by time, then
// session, stably.
func ReadDir(dir string, since time.Time) (*Log, error) {
	st, err := os.Stat(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%w: %s does not exist (is [telemetry] enabled = true?)", ErrNoDir, dir)
		}
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrNoDir, dir)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	l := &Log{}
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			return nil, err
		}
		err = l.Read(f, since)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		l.Files++
	}
	slices.SortStableFunc(l.Records, func(a, b Record) int {
		if a.Ms != b.Ms {
			if a.Ms < b.Ms {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Session, b.Session)
	})
	return l, nil
}

// maxLine bounds one line; longer lines are skipped.
const maxLine = 1 << 20

// Read appends the events of one JSONL stream. Only read errors are
// returned.
func (l *Log) Read(r io.Reader, since time.Time) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, long, err := readLine(br)
		if long {
			l.Skipped++
		} else if len(bytes.TrimSpace(line)) > 0 {
			var rec Record
			if json.Unmarshal(line, &rec) != nil || rec.V < 1 || rec.V > Version || rec.Ms <= 0 || rec.Session == "" {
				l.Skipped++
			} else if !since.IsZero() && rec.Ms < since.UnixMilli() {
				l.Old++
			} else {
				l.Records = append(l.Records, rec)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine returns the next line without its newline, or long for a line
// longer than maxLine, which is consumed.
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	var buf []byte
	for {
		var chunk []byte
		chunk, err = br.ReadSlice('\n')
		if !long {
			if len(buf)+len(chunk) > maxLine {
				long, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long {
			return nil, true, err
		}
		return bytes.TrimRight(buf, "\r\n"), false, err
	}
}
