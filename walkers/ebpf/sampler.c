//go:build ignore

// SPDX-License-Identifier: GPL-2.0
// The kernel half of the ebpf walker: a perf_event program that runs on every cpu-clock
// tick of every CPU, keeps the ticks that interrupted the target process, unwinds that
// thread's user stack by frame pointers (bpf_get_stack) and hands it to Go through a ring
// buffer. Rebuild with `go generate ./walkers/ebpf` (needs clang).
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

// Deepest stack one sample can carry; the per-CPU scratch value must stay under the
// kernel's 32 KiB per-CPU allocation limit.
#define MAX_FRAMES 2048

// Layout shared with sample.go (checked by TestSampleLayout).
struct sample {
	__u32 pid;
	__u32 tid;
	__u64 time_ns; // bpf_ktime_get_ns: CLOCK_MONOTONIC
	__u32 cpu;
	__s32 err;     // negative errno from bpf_get_stack, else 0
	__u32 nframes;
	__u32 flags;   // SAMPLE_KERNEL: the tick interrupted a system call or fault
	__u64 frames[MAX_FRAMES];
};

#define SAMPLE_KERNEL 1

enum counter {
	C_TICKS,     // program runs, any process
	C_MATCHED,   // ticks in the target process
	C_DROPPED,   // ring buffer full
	C_STACK_ERR, // bpf_get_stack failed
	C_MAX,
};

// Set by Go before loading; the verifier sees them as constants.
const volatile __u32 target_tgid = 0;
const volatile __u32 max_frames = 127;
const volatile __u64 wakeup_bytes = 1 << 20;
// Non-zero when Go runs in a child PID namespace: the tgid above is in that namespace.
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} samples SEC(".maps");

// A sample is too big for the BPF stack: it is assembled here, then copied out with its
// real length so the ring buffer carries only the frames taken.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample);
} scratch SEC(".maps");

// Per CPU, so the program never needs an atomic.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, C_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 c)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &c);
	if (v)
		(*v)++;
}

SEC("perf_event")
int sample_stack(struct bpf_perf_event_data *ctx)
{
	__u32 pid, tid, zero = 0;

	count(C_TICKS);
	if (pidns_ino) {
		struct bpf_pidns_info ns;
		if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)))
			return 0;
		pid = ns.tgid;
		tid = ns.pid;
	} else {
		__u64 id = bpf_get_current_pid_tgid();
		pid = id >> 32;
		tid = (__u32)id;
	}
	if (pid != target_tgid)
		return 0;
	count(C_MATCHED);

	struct sample *s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	s->pid = pid;
	s->tid = tid;
	s->time_ns = bpf_ktime_get_ns();
	s->cpu = bpf_get_smp_processor_id();
	s->flags = (ctx->regs.cs & 3) == 0 ? SAMPLE_KERNEL : 0;

	__u32 size = max_frames * sizeof(__u64);
	if (size > sizeof(s->frames))
		size = sizeof(s->frames);
	long n = bpf_get_stack(ctx, s->frames, size, BPF_F_USER_STACK);
	s->err = 0;
	if (n < 0) {
		s->err = n;
		n = 0;
		count(C_STACK_ERR);
	}
	if (n > sizeof(s->frames)) // never, but the verifier needs the bound
		n = sizeof(s->frames);
	s->nframes = n / sizeof(__u64);

	// Waking the reader for every sample would cost a context switch per tick on a
	// machine that is already saturated; Go polls and is woken only when data piles up.
	__u64 flags = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
			      BPF_RB_FORCE_WAKEUP :
			      BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&samples, s, __builtin_offsetof(struct sample, frames) + n, flags))
		count(C_DROPPED);
	return 0;
}

// bpf_get_stack and bpf_get_ns_current_pid_tgid are GPL-only helpers.
char LICENSE[] SEC("license") = "GPL";
