/* The agent's side of the sample log (layout in wf_samplelog.h): map it, append records. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "samplelog.h"

static struct wf_log_header *wf_hdr; /* the mapping; this file owns it */
static unsigned char *ring;
static uint64_t ring_mask;
static uint64_t ring_size;

/* Standalone use (a reproducer run without the harness): lay the file out ourselves,
 * exactly as the harness would. */
static int wf_log_create(const char *path) {
    const uint32_t slots = 4096;
    const uint64_t ring_bytes = 16u << 20;
    uint64_t table = WF_LOG_HEADER_SIZE;
    uint64_t ring_off = (table + (uint64_t)slots * sizeof(struct wf_log_thread) + 4095) & ~4095ull;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    struct wf_log_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, WF_LOG_MAGIC, 8);
    h.version = WF_LOG_VERSION;
    h.header_size = WF_LOG_HEADER_SIZE;
    h.ring_offset = ring_off;
    h.ring_size = ring_bytes;
    h.thread_table_offset = table;
    h.thread_table_slots = slots;
    h.thread_slot_size = sizeof(struct wf_log_thread);
    if (ftruncate(fd, (off_t)(ring_off + ring_bytes)) || pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) {
        close(fd);
        return -1;
    }
    return fd;
}

int wf_log_map(const char *path, char *err, size_t errlen) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) fd = wf_log_create(path);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open sample log %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) || st.st_size < WF_LOG_HEADER_SIZE) {
        close(fd);
        snprintf(err, errlen, "sample log %s is too small", path);
        return -1;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "cannot map sample log %s: %s", path, strerror(errno));
        return -1;
    }
    struct wf_log_header *h = p;
    if (memcmp(h->magic, WF_LOG_MAGIC, 8) || h->version != WF_LOG_VERSION ||
        h->ring_offset + h->ring_size > (uint64_t)st.st_size || (h->ring_size & (h->ring_size - 1)) ||
        h->thread_table_offset + (uint64_t)h->thread_table_slots * h->thread_slot_size > h->ring_offset ||
        h->thread_slot_size != sizeof(struct wf_log_thread)) {
        munmap(p, (size_t)st.st_size);
        snprintf(err, errlen, "sample log %s has a bad header", path);
        return -1;
    }
    wf_hdr = h;
    ring = (unsigned char *)p + h->ring_offset;
    ring_size = h->ring_size;
    ring_mask = ring_size - 1;
    return 0;
}

void wf_log_error(const char *fmt, ...) {
    if (!wf_hdr) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(wf_hdr->error, sizeof wf_hdr->error, fmt, ap);
    va_end(ap);
    __atomic_store_n(&wf_hdr->agent_state, WF_STATE_FAILED, __ATOMIC_RELEASE);
}

struct wf_log_header *wf_log_header(void) { return wf_hdr; }

struct wf_log_thread *wf_log_thread_slot(int slot) {
    if (!wf_hdr || slot < 0 || (uint32_t)slot >= wf_hdr->thread_table_slots) return NULL;
    return (struct wf_log_thread *)((char *)wf_hdr + wf_hdr->thread_table_offset +
                                    (uint64_t)slot * wf_hdr->thread_slot_size);
}

/* Copy into the ring at absolute position pos, splitting at the ring's end.
 * Plain stores into an already-mapped page: async-signal-safe. */
static void ring_put(uint64_t pos, const void *src, size_t n) {
    uint64_t off = pos & ring_mask;
    size_t first = n;
    if (off + n > ring_size) first = (size_t)(ring_size - off);
    memcpy(ring + off, src, first);
    if (first < n) memcpy(ring, (const char *)src + first, n - first);
}

/* Called from the signal handler. Lock-free: one CAS loop claims space, so concurrent
 * handlers on other threads never wait on each other; a full ring drops the record. */
int wf_log_append(uint32_t tid, uint16_t walker, uint16_t flags, uint64_t ts_ns, uint32_t walk_ns,
                  int32_t result, uint32_t region, uint32_t overhead_ns, uint64_t sample,
                  const struct wf_frame *frames, int nframes) {
    if (nframes < 0) nframes = 0;
    uint64_t max_frames = (ring_size / 4 - WF_RECORD_HEADER) / sizeof(struct wf_frame);
    if ((uint64_t)nframes > max_frames) nframes = (int)max_frames;
    uint32_t len = WF_RECORD_HEADER + (uint32_t)nframes * (uint32_t)sizeof(struct wf_frame);

    uint64_t pos = __atomic_load_n(&wf_hdr->write_cursor, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t rd = __atomic_load_n(&wf_hdr->read_cursor, __ATOMIC_ACQUIRE);
        if (pos + len - rd > ring_size) {
            __atomic_fetch_add(&wf_hdr->dropped_records, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&wf_hdr->dropped_bytes, len, __ATOMIC_RELAXED);
            return -1;
        }
        if (__atomic_compare_exchange_n(&wf_hdr->write_cursor, &pos, pos + len, 1, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            break;
    }

    struct wf_record r = {
        .commit = 0,
        .len = len,
        .tid = tid,
        .walker = walker,
        .flags = flags,
        .ts_ns = ts_ns,
        .walk_ns = walk_ns,
        .result = result,
        .region = region,
        .overhead_ns = overhead_ns,
        .sample = sample,
    };
    /* Everything but the commit word first; the commit word last, with release order, so a
     * reader that sees it also sees the body. */
    ring_put(pos + 4, (const char *)&r + 4, WF_RECORD_HEADER - 4);
    if (nframes) ring_put(pos + WF_RECORD_HEADER, frames, (size_t)nframes * sizeof(struct wf_frame));
    __atomic_store_n((uint32_t *)(ring + (pos & ring_mask)), wf_commit_word(pos), __ATOMIC_RELEASE);
    return 0;
}
