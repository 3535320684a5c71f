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
    OFF(wf_log_thread, tid); OFF(wf_log_thread, alive); OFF(wf_log_thread, name);
    OFF(wf_log_thread, requested); OFF(wf_log_thread, delivered); OFF(wf_log_thread, walked);
    OFF(wf_log_thread, overruns); OFF(wf_log_thread, cpu_ns); OFF(wf_log_thread, handler_ns);
    OFF(wf_log_thread, biased); OFF(wf_log_thread, shed); OFF(wf_log_thread, handler_since);
    OFF(wf_record, commit); OFF(wf_record, len); OFF(wf_record, tid); OFF(wf_record, walker);
    OFF(wf_record, flags); OFF(wf_record, ts_ns); OFF(wf_record, walk_ns); OFF(wf_record, result);
    OFF(wf_record, region); OFF(wf_record, overhead_ns); OFF(wf_record, sample);
    OFF(wf_frame, bci); OFF(wf_frame, type); OFF(wf_frame, method);
    printf("sizeof.wf_log_thread %zu\n", sizeof(struct wf_log_thread));
    printf("sizeof.wf_record %zu\n", sizeof(struct wf_record));
    printf("sizeof.wf_frame %zu\n", sizeof(struct wf_frame));
    for (uint64_t pos = 0; pos < 1u << 20; pos += 4088) printf("commit.%llu %u\n", (unsigned long long)pos, wf_commit_word(pos));
}

/* cwriter append LOG N DRAIN: record i has i%13 frames (0: an error code), every field a
 * function of i, like walk() in helpers_test.go. DRAIN=1 consumes after each append. */
int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "offsets")) {
        offsets();
        return 0;
    }
    if (argc != 5 || strcmp(argv[1], "append")) {
        fprintf(stderr, "usage: cwriter offsets | cwriter append LOG N DRAIN\n");
        return 2;
    }
    char err[256];
    if (wf_log_map(argv[2], err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int n = atoi(argv[3]), drain = atoi(argv[4]);
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
