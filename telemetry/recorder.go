package telemetry

import (
	"hash/maphash"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Sink receives batches of events from a Recorder's writer goroutine. The
// batch is only valid during the call.
type Sink interface {
	Write(batch []Event) error
	Close() error
}

// Options configure a Recorder.
type Options struct {
	// SampleRate in (0, 1] keeps every round(1/rate)-th event; 0 means 1.
	SampleRate float64
	// Queue is how many events may wait for the writer; 0 means 1024.
	Queue int
	// Now returns the time for events without one; nil means time.Now.
	Now func() time.Time
}

// Stats count what a Recorder did with the events it was given.
type Stats struct {
	Seen       uint64 // Record calls
	SampledOut uint64 // left out by sampling
	Dropped    uint64 // the queue was full (or the Recorder closed)
	Written    uint64 // handed to the sink
	Errors     uint64 // sink write errors
}

// Recorder queues events for a Sink. Its methods are safe for concurrent
// use; all of them do nothing on a nil *Recorder.
type Recorder struct {
	sink   Sink
	q      chan Event
	ctl    chan chan struct{}
	stop   chan struct{}
	done   chan struct{}
	stride uint64
	now    func() time.Time
	seed   maphash.Seed
	closed atomic.Bool
	// inflight counts Record calls between their closed check and their
	// send, so that Close writes every event that got past the check.
	inflight atomic.Int64
	once     sync.Once

	seen, sampled, dropped, written, errs atomic.Uint64
}

// New starts a Recorder writing to sink.
func New(sink Sink, o Options) *Recorder {
	if o.Queue <= 0 {
		o.Queue = 1024
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	stride := uint64(1)
	if o.SampleRate > 0 && o.SampleRate < 1 {
		stride = uint64(math.Round(1 / o.SampleRate))
	}
	r := &Recorder{
		sink: sink, q: make(chan Event, o.Queue), ctl: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
		stride: stride, now: o.Now, seed: maphash.MakeSeed(),
	}
	go r.loop()
	return r
}

// Record queues a copy of e. It never blocks: when the queue is full the
// event is dropped and counted.
func (r *Recorder) Record(e *Event) {
	if r == nil {
		return
	}
	n := r.seen.Add(1)
	if n%r.stride != 0 {
		r.sampled.Add(1)
		return
	}
	r.inflight.Add(1)
	defer r.inflight.Add(-1)
	if r.closed.Load() {
		r.dropped.Add(1)
		return
	}
	ev := *e
	if ev.Time.IsZero() {
		ev.Time = r.now()
	}
	select {
	case r.q <- ev:
	default:
		r.dropped.Add(1)
	}
}

// Fingerprint identifies b within this Recorder's process (a keyed hash
// with a random key: equal inputs give equal fingerprints in one process,
// and fingerprints mean nothing across processes). It returns 0 on a nil
// Recorder.
func (r *Recorder) Fingerprint(b []byte) uint64 {
	if r == nil {
		return 0
	}
	h := maphash.Bytes(r.seed, b)
	if h == 0 {
		h = 1
	}
	return h
}

// Flush waits until every event queued before it has been given to the
// sink.
func (r *Recorder) Flush() {
	if r == nil || r.closed.Load() {
		return
	}
	ack := make(chan struct{})
	select {
	case r.ctl <- ack:
		<-ack
	case <-r.done:
	}
}

// Close writes what is queued, stops the writer and closes the sink.
// Events recorded afterwards are dropped.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	var err error
	r.once.Do(func() {
		r.Flush()
		r.closed.Store(true)
		for r.inflight.Load() != 0 {
			runtime.Gosched()
		}
		close(r.stop)
		<-r.done
		err = r.sink.Close()
	})
	return err
}

// Stats returns the counters so far.
func (r *Recorder) Stats() Stats {
	if r == nil {
		return Stats{}
	}
	return Stats{Seen: r.seen.Load(), SampledOut: r.sampled.Load(), Dropped: r.dropped.Load(),
		Written: r.written.Load(), Errors: r.errs.Load()}
}

func (r *Recorder) loop() {
	defer close(r.done)
	batch := make([]Event, 0, 256)
	write := func() {
		if len(batch) == 0 {
			return
		}
		if err := r.sink.Write(batch); err != nil {
			r.errs.Add(1)
		} else {
			r.written.Add(uint64(len(batch)))
		}
		clear(batch)
		batch = batch[:0]
	}
	drain := func() {
		for len(batch) < cap(batch) {
			select {
			case e := <-r.q:
				batch = append(batch, e)
			default:
				return
			}
		}
	}
	flush := func() {
		for {
			drain()
			if len(batch) == 0 {
				return
			}
			write()
		}
	}
	for {
		select {
		case e := <-r.q:
			batch = append(batch, e)
			drain()
			write()
		case ack := <-r.ctl:
			flush()
			close(ack)
		case <-r.stop:
			flush()
			return
		}
	}
}
