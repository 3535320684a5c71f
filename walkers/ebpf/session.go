package ebpf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
)

// Config is one sampling session.
type Config struct {
	Pid    int // the JVM, as this process sees it
	FreqHz int // per CPU; 10000 is one tick every 100 µs
	// MaxDepth is frames per sample, at most 2048; kernel.perf_event_max_stack is raised to
	// it when lower (Stats.Limits says so), and caps it when it cannot be raised.
	MaxDepth int
	// RaiseRate lets the walker raise kernel.perf_event_max_sample_rate when it is below
	// FreqHz; otherwise that is an "unsupported: " error.
	RaiseRate bool
	// OnSample, when set, receives every sample on the reader goroutine; the Sample and its
	// Frames are reused after it returns. When nil the session folds identical stacks and
	// Samples returns them.
	OnSample func(*Sample)
	// RingBytes is the ring buffer's size, a power of two (default 16 MiB: about a second
	// of deep stacks at 20 kHz on two CPUs).
	RingBytes int
}

// Session samples one process until Stop.
type Session struct {
	cfg     Config
	limits  Limits
	cpus    []int
	objs    *samplerObjects
	fds     []int
	rd      *ringbuf.Reader
	stats   interface{ Close() error } // BPF run-time statistics, when the kernel allows
	started time.Time
	halted  time.Time // sampling ended (Halt)

	stopping atomic.Bool
	done     chan struct{}
	readErr  error

	mu        sync.Mutex
	folded    map[string]*Sample // by frames; error samples by their errno
	threads   map[uint32]uint64
	delivered uint64
	inKernel  uint64
	malformed uint64
}

// Stats describe a finished session.
type Stats struct {
	Pid         int           `json:"pid"`
	FreqHz      int           `json:"freq_hz"`
	CPUs        int           `json:"cpus"`
	Depth       int           `json:"depth"` // effective: MaxDepth capped by perf_event_max_stack
	Duration    time.Duration `json:"duration_ns"`
	Ticks       uint64        `json:"ticks"`        // program runs on all CPUs, any process
	Matched     uint64        `json:"matched"`      // ticks that interrupted the target
	Delivered   uint64        `json:"delivered"`    // samples read from the ring buffer
	Dropped     uint64        `json:"dropped"`      // ring buffer full
	StackErrors uint64        `json:"stack_errors"` // bpf_get_stack failed
	InKernel    uint64        `json:"in_kernel"`    // ticks inside a system call or fault
	Malformed   uint64        `json:"malformed"`
	Threads     int           `json:"threads"`
	// TicksPerS is the cpu-clock rate actually seen over all CPUs (requested: FreqHz×CPUs);
	// SamplesPerS the target's share of it.
	TicksPerS   float64 `json:"ticks_per_s"`
	SamplesPerS float64 `json:"samples_per_s"`
	// BPF run-time statistics (kernel 5.8+, BPF_ENABLE_STATS); zero when unavailable.
	BPFRunCount  uint64   `json:"bpf_run_count"`
	BPFRunTimeNs uint64   `json:"bpf_run_time_ns"`
	BPFNsPerRun  float64  `json:"bpf_ns_per_run"`
	Limits       Limits   `json:"limits"`
	Notes        []string `json:"notes,omitempty"`
}

// Start samples pid at freqHz per CPU with stacks up to maxDepth frames.
func Start(pid, freqHz, maxDepth int) (*Session, error) {
	return StartConfig(Config{Pid: pid, FreqHz: freqHz, MaxDepth: maxDepth})
}

// StartConfig starts a session; its errors from missing kernel support start with
// "unsupported: ".
func StartConfig(cfg Config) (*Session, error) {
	if cfg.RingBytes == 0 {
		cfg.RingBytes = 16 << 20
	}
	if cfg.RingBytes&(cfg.RingBytes-1) != 0 || cfg.RingBytes < os.Getpagesize() {
		return nil, fmt.Errorf("ebpf walker: ring size %d is not a power of two of at least a page", cfg.RingBytes)
	}
	limits, err := ProbeFor(cfg.FreqHz, cfg.MaxDepth, cfg.RaiseRate)
	if err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, limits: limits, done: make(chan struct{}),
		folded: map[string]*Sample{}, threads: map[uint32]uint64{}}
	if err := s.open(); err != nil {
		s.close()
		return nil, err
	}
	go s.read()
	return s, nil
}

func (s *Session) open() error {
	var err error
	if s.cpus, err = onlineCPUs(); err != nil {
		return fmt.Errorf("ebpf walker: online cpus: %w", err)
	}
	if s.objs, err = load(loadParams{tgid: uint32(s.cfg.Pid), depth: s.limits.Depth(s.cfg.MaxDepth), ringBytes: s.cfg.RingBytes}); err != nil {
		return fmt.Errorf("ebpf walker: load: %w", err)
	}
	if s.rd, err = ringbuf.NewReader(s.objs.Samples); err != nil {
		return fmt.Errorf("ebpf walker: ring buffer: %w", err)
	}
	if st, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME); err == nil {
		s.stats = st
	}
	for _, cpu := range s.cpus {
		fd, err := openCPUClock(cpu, s.cfg.FreqHz)
		if err != nil {
			return fmt.Errorf("ebpf walker: perf_event_open(cpu-clock, cpu %d, %d Hz): %w", cpu, s.cfg.FreqHz, err)
		}
		s.fds = append(s.fds, fd)
		if err := attach(fd, s.objs.SampleStack.FD()); err != nil {
			return fmt.Errorf("ebpf walker: cpu %d: %w", cpu, err)
		}
	}
	s.started = time.Now()
	return nil
}

// pollInterval bounds how stale the reader gets: the program wakes it only when a quarter
// of the ring is full.
const pollInterval = 20 * time.Millisecond

func (s *Session) read() {
	defer close(s.done)
	var rec ringbuf.Record
	var smp Sample
	for {
		s.rd.SetDeadline(time.Now().Add(pollInterval))
		err := s.rd.ReadInto(&rec)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The ring is empty; once the events are closed it stays empty.
			if s.stopping.Load() {
				return
			}
			continue
		case err != nil:
			s.readErr = err
			return
		}
		if decodeSample(rec.RawSample, &smp) != nil {
			s.mu.Lock()
			s.malformed++
			s.mu.Unlock()
			continue
		}
		s.add(&smp, rec.RawSample)
	}
}

// add counts a sample; raw is its record, whose frames, little-endian as the key wants
// them, are the folding key. Deep stacks come at up to 20 kHz: a lookup copies nothing,
// only a new stack's key is allocated.
func (s *Session) add(smp *Sample, raw []byte) {
	s.mu.Lock()
	s.delivered++
	s.threads[smp.Tid]++
	if smp.InKernel {
		s.inKernel++
	}
	if s.cfg.OnSample != nil {
		s.mu.Unlock()
		s.cfg.OnSample(smp)
		return
	}
	defer s.mu.Unlock()
	key := raw[sampleHeader : sampleHeader+8*len(smp.Frames)]
	if smp.Err != 0 {
		// Failed walks have no frames and fold by their errno: a key no stack can have,
		// 5 bytes long.
		key = binary.LittleEndian.AppendUint32([]byte{'e'}, uint32(smp.Err))
	}
	if f := s.folded[string(key)]; f != nil {
		f.Count++
		return
	}
	c := *smp
	c.Frames = append([]uint64(nil), smp.Frames...)
	s.folded[string(key)] = &c
}

// Halt ends sampling now: the program leaves every CPU, and what it wrote stays in the
// ring buffer for Stop. A caller that must act on the live process after the last sample
// (dump its perf map) halts first, acts, then stops: draining a ring the reader fell behind
// on took 1-3 s on a loaded machine, while the JVM went on towards its exit.
func (s *Session) Halt() {
	if s.halted.IsZero() {
		s.halted = time.Now()
	}
	for _, fd := range s.fds {
		closeFD(fd) // detaches the program from that CPU
	}
	s.fds = nil
}

// Stop ends sampling if Halt did not, drains the ring buffer and reports. It may be called
// once.
func (s *Session) Stop() (Stats, error) {
	s.Halt()
	s.stopping.Store(true)
	<-s.done
	st := s.collect(s.halted.Sub(s.started))
	err := s.readErr
	s.close()
	return st, err
}

func (s *Session) collect(elapsed time.Duration) Stats {
	s.mu.Lock()
	st := Stats{
		Pid: s.cfg.Pid, FreqHz: s.cfg.FreqHz, CPUs: len(s.cpus), Depth: s.limits.Depth(s.cfg.MaxDepth),
		Duration: elapsed, Delivered: s.delivered, InKernel: s.inKernel,
		Malformed: s.malformed, Threads: len(s.threads), Limits: s.limits,
	}
	s.mu.Unlock()
	counts := s.counters()
	st.Ticks, st.Matched, st.Dropped, st.StackErrors = counts[0], counts[1], counts[2], counts[3]
	if secs := elapsed.Seconds(); secs > 0 {
		st.TicksPerS = float64(st.Ticks) / secs
		st.SamplesPerS = float64(st.Delivered) / secs
	}
	if ps, err := s.objs.SampleStack.Stats(); err == nil && s.stats != nil {
		st.BPFRunCount, st.BPFRunTimeNs = ps.RunCount, uint64(ps.Runtime)
		if ps.RunCount > 0 {
			st.BPFNsPerRun = float64(ps.Runtime) / float64(ps.RunCount)
		}
	} else {
		st.Notes = append(st.Notes, "BPF run-time statistics unavailable (BPF_ENABLE_STATS needs Linux 5.8+)")
	}
	// The kernel lowers the rate limit when perf interrupts take too long; say so.
	if now, err := ReadLimits(); err == nil && now.MaxSampleRate < s.limits.MaxSampleRate {
		st.Notes = append(st.Notes, fmt.Sprintf("kernel lowered perf_event_max_sample_rate from %d to %d during the run (perf interrupts too slow)", s.limits.MaxSampleRate, now.MaxSampleRate))
		st.Limits.MaxSampleRate = now.MaxSampleRate
	}
	return st
}

// counters sums the program's per-CPU counters (enum counter in sampler.c).
func (s *Session) counters() [4]uint64 {
	var out [4]uint64
	var vals []uint64 // one per possible CPU, sized by Lookup
	for i := range out {
		if err := s.objs.Counters.Lookup(uint32(i), &vals); err != nil {
			continue
		}
		for _, v := range vals {
			out[i] += v
		}
	}
	return out
}

func (s *Session) close() {
	for _, fd := range s.fds {
		closeFD(fd)
	}
	if s.rd != nil {
		s.rd.Close()
	}
	if s.stats != nil {
		s.stats.Close()
	}
	if s.objs != nil {
		s.objs.Close()
	}
}

// Samples returns the folded stacks, most frequent first. Valid after Stop; empty when
// the session had an OnSample callback.
func (s *Session) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Sample, 0, len(s.folded))
	for _, f := range s.folded {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// Threads returns the samples taken per thread id.
func (s *Session) Threads() map[uint32]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[uint32]uint64, len(s.threads))
	for k, v := range s.threads {
		out[k] = v
	}
	return out
}
