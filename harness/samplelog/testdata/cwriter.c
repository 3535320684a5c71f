/* Test driver for samplelog's layout test: the agent's own wf_log_append writing the same
 * records the Go test writes with Writer, and offsetof for every field Go hard-codes. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samplelog.h" /* the agent's log unit: walkers/core/samplelog.h */

#define OFF(s, f) printf("%s.%s %zu\n", #s, #f, offsetof(struct s, f))

static void offsets(void) {
    OFF(wf_log_header, magic); OFF(wf_log_header, version); OFF(wf_log_header, header_size);
    OFF(wf_log_header, ring_offset); OFF(wf_log_header, ring_size); OFF(wf_log_header, write_cursor);
    OFF(wf_log_header, read_cursor); OFF(wf_log_header, heartbeat_ns); OFF(wf_log_header, heartbeat_count);
    OFF(wf_log_header, dropped_records); OFF(wf_log_header, dropped_bytes); OFF(wf_log_header, agent_state);
    OFF(wf_log_header, requested); OFF(wf_log_header, delivered); OFF(wf_log_header, walked);
    OFF(wf_log_header, overruns); OFF(wf_log_header, threads_registered);
    OFF(wf_log_header, thread_table_offset); OFF(wf_log_header, thread_table_slots);
    OFF(wf_log_header, thread_slot_size); OFF(wf_log_header, agent_pid); OFF(wf_log_header, start_ns);
    OFF(wf_log_header, error); OFF(wf_log_header, walker_names); OFF(wf_log_header, no_thread);
    OFF(wf_log_header, nested); OFF(wf_log_header, max_depth); OFF(wf_log_header, interval_ns);
    OFF(wf_log_header, perturbed); OFF(wf_log_header, faults_caught); OFF(wf_log_header, read_faults_injected);
    OFF(wf_log_header, nested_walked);
    OFF(wf_log_header, remote_walks); OFF(wf_log_header, remote_busy); OFF(wf_log_header, remote_timeout);
    OFF(wf_log_header, cpu_restarts);
    OFF(wf_log_header, cpu_user_only);
    OFF(wf_log_header, clock_realtime_ns); OFF(wf_log_header, clock_monotonic_ns);
    OFF(wf_log_header, wrap_signo); OFF(wf_log_header, wrap_state); OFF(wf_log_header, wrap_lost);
    OFF(wf_log_header, wrap_rewrapped); OFF(wf_log_header, wrap_prev_flags); OFF(wf_log_header, wrap_prev_handler);
    OFF(wf_log_thread, tid); OFF(wf_log_thread, alive); OFF(wf_log_thread, name);
    OFF(wf_log_thread, requested); OFF(wf_log_thread, delivered); OFF(wf_log_thread, walked);
    OFF(wf_log_thread, overruns); OFF(wf_log_thread, cpu_ns); OFF(wf_log_thread, handler_ns);
    OFF(wf_log_thread, biased); OFF(wf_log_thread, shed); OFF(wf_log_thread, handler_since);
    OFF(wf_record, commit); OFF(wf_record, len); OFF(wf_record, tid); OFF(wf_record, walker);
    OFF(wf_record, flags); OFF(wf_record, ts_ns); OFF(wf_record, walk_ns); OFF(wf_record, result);
    OFF(wf_record, region); OFF(wf_record, overhead_ns); OFF(wf_record, sample);
    OFF(wf_record, seq); OFF(wf_record, slot); OFF(wf_record, shared); OFF(wf_record, at);
    OFF(wf_record, from); OFF(wf_record, base_seq);
    OFF(wf_frame, bci); OFF(wf_frame, type); OFF(wf_frame, method);
    printf("sizeof.wf_log_thread %zu\n", sizeof(struct wf_log_thread));
    printf("sizeof.wf_record %zu\n", sizeof(struct wf_record));
    printf("sizeof.wf_frame %zu\n", sizeof(struct wf_frame));
    for (uint64_t pos = 0; pos < 1u << 20; pos += 4088) printf("commit.%llu %u\n", (unsigned long long)pos, wf_commit_word(pos));
}

/* Walk i of chainWalk() in chain_test.go: a thread's stack that keeps its root and changes
 * its top, or recurses to another depth below a changing leaf. */
static int chain_walk(int i, struct wf_frame *f) {
    int depth = 3 + (i * 7) % 40, n = 0;
    if (i % 5 == 4) return 0; /* an error code: no frames */
    if ((i / 16) % 2 == 1) {
        /* recursion: the leaf, then levels numbered from the leaf, then the root */
        f[n++] = (struct wf_frame){.bci = i % 17, .type = 2, .method = 0x7f0000009000ull + (uint64_t)(i % 4)};
        for (int k = 1; k < depth; k++)
            f[n++] = (struct wf_frame){.bci = 4 + k % 3, .type = (uint32_t)(1 + k % 3), .method = 0x7f0000008000ull + (uint64_t)(k % 3) * 8};
    } else {
        /* a steady root under a top that changes */
        int top = 1 + i % 4;
        for (int k = 0; k < top; k++)
            f[n++] = (struct wf_frame){.bci = i + k, .type = 1, .method = 0x7f0000007000ull + (uint64_t)(i % 9) * 8 + (uint64_t)k};
        for (int k = depth / 2 - 1; k >= 0; k--) /* numbered from the root */
            f[n++] = (struct wf_frame){.bci = 10 + k, .type = 0, .method = 0x7f0000006000ull + (uint64_t)k * 8};
    }
    f[n++] = (struct wf_frame){.bci = 0, .type = 1, .method = 0x7f0000005000ull}; /* run() */
    return n;
}

/* Walk i of agentDeepWalk() in chain_test.go: a deep stack (hundreds of frames) whose root-most
 * part holds one changed frame at a position that moves from walk to walk, under a few leaf
 * frames: the shared runs are long and end anywhere inside a block of eight frames. */
static int deep_walk(int i, struct wf_frame *f) {
    int depth = 200 + (i * 37) % 300, top = 1 + i % 3, n = 0;
    int changed = (i * 13) % depth; /* numbered from the root */
    for (int k = 0; k < top; k++)
        f[n++] = (struct wf_frame){.bci = i + k, .type = 1, .method = 0x7f000000a000ull + (uint64_t)k * 8};
    for (int k = depth - 1; k >= 0; k--)
        f[n++] = (struct wf_frame){.bci = k == changed ? 1000 + i : k % 11, .type = 0,
                                   .method = 0x7f000000b000ull + (uint64_t)(k % 50) * 8};
    return n;
}

/* cwriter append LOG N DRAIN: record i has i%13 frames (0: an error code), every field a
 * function of i, like walk() in helpers_test.go. DRAIN=1 consumes after each append.
 * cwriter chain LOG N DRAIN: the agent's chained appends of chainWalk(i) on two threads
 * (slots 1 and 2, tid 100 + slot), two walkers each, as chain_test.go writes them with
 * Writer.AppendChained.
 * cwriter deep LOG N DRAIN: the same with agentDeepWalk(i) and chains of 512 frames.
 * WF_LOG_SIMD=0 in the environment: the agent's plain run comparisons instead of AVX2. */
int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "offsets")) {
        offsets();
        return 0;
    }
    if (argc != 5 || (strcmp(argv[1], "append") && strcmp(argv[1], "chain") && strcmp(argv[1], "deep"))) {
        fprintf(stderr, "usage: cwriter offsets | cwriter append|chain|deep LOG N DRAIN\n");
        return 2;
    }
    char err[256];
    if (wf_log_map(argv[2], err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    /* WF_LOG_SIMD=0: the plain run comparisons instead of the AVX2 ones wf_log_map chose. */
    const char *simd = getenv("WF_LOG_SIMD");
    if (simd && !strcmp(simd, "0")) wf_log_set_simd(0);
    int n = atoi(argv[3]), drain = atoi(argv[4]);
    if (!strcmp(argv[1], "chain") || !strcmp(argv[1], "deep")) {
        int deep = !strcmp(argv[1], "deep");
        enum { cap = 512 }; /* chain: Chain.Cap 64 in chain_test.go; deep: 512 */
        static struct wf_frame bufs[9][cap];
        struct wf_chain chains[4];
        for (int c = 0; c < 4; c++)
            chains[c] = (struct wf_chain){.base = bufs[2 * c], .deep = bufs[2 * c], .spare = bufs[2 * c + 1], .cap = deep ? cap : 64};
        struct wf_frame *walk = bufs[8];
        for (int i = 0; i < n; i++) {
            int c = i % 4, slot = 1 + c / 2, nf = deep ? deep_walk(i, walk) : chain_walk(i, walk);
            struct wf_record r = {.tid = (uint32_t)(100 + slot), .walker = (uint16_t)(c % 2), .flags = (uint16_t)(i % 4),
                                  .ts_ns = (uint64_t)i * 1000, .walk_ns = (uint32_t)(500 + i), .result = nf ? nf : -3,
                                  .region = (uint32_t)(i % 3), .overhead_ns = (uint32_t)(i * 3), .sample = (uint64_t)i,
                                  .slot = (uint16_t)slot};
            wf_log_append_chain(&chains[c], &r, &walk, nf);
            if (drain) wf_log_header()->read_cursor = wf_log_header()->write_cursor;
        }
        return 0;
    }
    struct wf_frame frames[16];
    for (int i = 0; i < n; i++) {
        int nf = i % 13;
        for (int k = 0; k < nf; k++) {
            frames[k].bci = i * 7 + k - 3;
            frames[k].type = (uint32_t)(k % 7);
            frames[k].method = 0x7f0000000000ull + (uint64_t)i * 64 + (uint64_t)k;
        }
        wf_log_append((uint32_t)(100 + i % 5), (uint16_t)(i % 2), (uint16_t)(i % 4), (uint64_t)i * 1000,
                      (uint32_t)(500 + i), nf ? nf : -(i % 11), (uint32_t)(i % 3), (uint32_t)(i * 3),
                      (uint64_t)(i / 2), frames, nf);
        if (drain) wf_log_header()->read_cursor = wf_log_header()->write_cursor;
    }
    return 0;
}
