/* The agent's side of the sample log (layout in wf_samplelog.h): map it, append records. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base.h"
#include "samplelog.h"
#include <emmintrin.h> /* SSE2: ring_put */

struct wf_log_header *wf_hdr; /* the mapping; this file owns it */
static unsigned char *ring;
static uint64_t ring_mask;
static uint64_t ring_size;
static uint64_t page_size;
static uint64_t prefaulted; /* ring bytes [0, prefaulted) were touched for writing (service thread) */

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
    int rc = posix_fallocate(fd, 0, (off_t)(ring_off + ring_bytes));
    if (rc || pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) {
        if (rc) errno = rc;
        int saved = errno;
        close(fd);
        unlink(path);
        errno = saved;
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
    /* Every block reserved before the first store: a page the file system cannot supply when
     * a handler first writes it (a full disk, a sparse file) is a SIGBUS in the JVM, which
     * would pass for a walker's crash. The harness creates the file allocated; this makes sure
     * (cheap when it is) and fails the start on a full disk instead. */
    int rc = posix_fallocate(fd, 0, st.st_size);
    if (rc && rc != EOPNOTSUPP && rc != EINVAL) {
        close(fd);
        snprintf(err, errlen, "cannot allocate the %lld-byte sample log %s: %s", (long long)st.st_size, path, strerror(rc));
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
    long ps = sysconf(_SC_PAGESIZE);
    page_size = ps > 0 ? (uint64_t)ps : 4096;
    wf_log_prefault(WF_LOG_PREFAULT_AHEAD / 8);
    wf_log_set_simd(1);
    return 0;
}

/* The ring is a fresh file's pages: the first store into each page faults (the kernel finds
 * or allocates the page-cache page and the filesystem reserves its block), several
 * microseconds that a signal handler appending there would spend on the interrupted thread,
 * once per 4 KiB of records until the ring has wrapped once. So the service thread touches
 * the pages ahead of the write cursor first, with a locked add of zero to one word of each:
 * a write access that changes no byte, so a record a handler is writing into the same page
 * at that moment (or one the harness has not read yet) is never disturbed. After the first
 * lap every page has been touched and this does nothing. */
void wf_log_prefault(uint64_t ahead) {
    if (!wf_hdr || prefaulted >= ring_size) return;
    uint64_t limit = __atomic_load_n(&wf_hdr->write_cursor, __ATOMIC_RELAXED) + ahead;
    if (limit > ring_size) limit = ring_size;
    for (uint64_t off = prefaulted; off < limit; off += page_size)
        __atomic_fetch_add((uint64_t *)(ring + off), 0, __ATOMIC_RELAXED);
    if (limit > prefaulted) prefaulted = (limit + page_size - 1) & ~(page_size - 1);
}

void wf_log_error(const char *fmt, ...) {
    if (!wf_hdr) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(wf_hdr->error, sizeof wf_hdr->error, fmt, ap);
    va_end(ap);
    __atomic_store_n(&wf_hdr->agent_state, WF_STATE_FAILED, __ATOMIC_RELEASE);
}


struct wf_log_thread *wf_log_thread_slot(int slot) {
    if (!wf_hdr || slot < 0 || (uint32_t)slot >= wf_hdr->thread_table_slots) return NULL;
    return (struct wf_log_thread *)((char *)wf_hdr + wf_hdr->thread_table_offset +
                                    (uint64_t)slot * wf_hdr->thread_slot_size);
}

/* Copy into the ring at absolute position pos, splitting at the ring's end.
 * Plain stores into an already-mapped page: async-signal-safe.
 * A record's header (60 bytes after the commit word) and the few frames most records carry
 * are copied inline, 16 bytes at a time. A call to libc's memcpy for them went through the
 * GOT and libc's own dispatch into code the workload had evicted since the last signal:
 * overhead_ns p50 on loops at 100 us (JDK 17, jitter 0, 5 interleaved rounds) 270-318 ->
 * 247-282 ns. (SSE2 intrinsics: a plain loop here is one GCC turns back into memcpy.) */
WF_HOT static inline void ring_put(uint64_t pos, const void *src, size_t n) {
    uint64_t off = pos & ring_mask;
    if (n <= 256 && off + n <= ring_size) {
        unsigned char *d = ring + off;
        const unsigned char *q = src;
        for (; n >= 16; n -= 16, d += 16, q += 16) _mm_storeu_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)q));
        if (n >= 8) {
            __builtin_memcpy(d, q, 8);
            d += 8, q += 8, n -= 8;
        }
        if (n >= 4) {
            __builtin_memcpy(d, q, 4);
            d += 4, q += 4, n -= 4;
        }
        while (n--) *d++ = *q++;
        return;
    }
    size_t first = n;
    if (off + n > ring_size) first = (size_t)(ring_size - off);
    memcpy(ring + off, src, first);
    if (first < n) memcpy(ring, (const char *)src + first, n - first);
}

/* Frames a record may carry: a quarter of the ring, so one walk never fills it. */
static uint64_t max_frames(void) { return (ring_size / 4 - WF_RECORD_HEADER) / sizeof(struct wf_frame); }

/* Lock-free: one CAS loop claims len bytes, so concurrent handlers on other threads (or a
 * nested handler level on this one) never wait on each other. A full ring drops the record
 * and counts it: 0 and the position, or -1. */
WF_HOT static int claim(uint32_t len, uint64_t *at) {
    uint64_t pos = __atomic_load_n(&wf_hdr->write_cursor, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t rd = __atomic_load_n(&wf_hdr->read_cursor, __ATOMIC_ACQUIRE);
        if (pos + len - rd > ring_size) {
            __atomic_fetch_add(&wf_hdr->dropped_records, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&wf_hdr->dropped_bytes, len, __ATOMIC_RELAXED);
            return -1;
        }
        if (__atomic_compare_exchange_n(&wf_hdr->write_cursor, &pos, pos + len, 1, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED)) {
            *at = pos;
            return 0;
        }
    }
}

/* Everything but the commit word first; the commit word last, with release order, so a
 * reader that sees it also sees the body. */
WF_HOT static void put(uint64_t pos, const struct wf_record *r, const struct wf_frame *frames, uint32_t nwrite) {
    ring_put(pos + 4, (const char *)r + 4, WF_RECORD_HEADER - 4);
    if (nwrite) ring_put(pos + WF_RECORD_HEADER, frames, (size_t)nwrite * sizeof(struct wf_frame));
    __atomic_store_n((uint32_t *)(ring + (pos & ring_mask)), wf_commit_word(pos), __ATOMIC_RELEASE);
}

WF_HOT int wf_log_append_record(struct wf_record *r, const struct wf_frame *frames, int nframes) {
    if (nframes < 0) nframes = 0;
    if ((uint64_t)nframes > max_frames()) nframes = (int)max_frames();
    r->commit = 0;
    r->seq = 0;
    r->shared = r->at = r->from = 0;
    r->base_seq = 0;
    r->len = WF_RECORD_HEADER + (uint32_t)nframes * (uint32_t)sizeof(struct wf_frame);
    uint64_t pos;
    if (claim(r->len, &pos)) return -1;
    put(pos, r, frames, (uint32_t)nframes);
    return 0;
}

/* Called from the signal handler (and from the safepoint thread, deferred deliveries). */
int wf_log_append(uint32_t tid, uint16_t walker, uint16_t flags, uint64_t ts_ns, uint32_t walk_ns,
                  int32_t result, uint32_t region, uint32_t overhead_ns, uint64_t sample,
                  const struct wf_frame *frames, int nframes) {
    struct wf_record r = {
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
    return wf_log_append_record(&r, frames, nframes);
}

/* Frames compared as two words each; may_alias: the same bytes are also read as wf_frame. */
typedef uint64_t __attribute__((may_alias)) wf_word;

static inline int same(const struct wf_frame *a, const struct wf_frame *b) {
    const wf_word *p = (const wf_word *)a, *q = (const wf_word *)b;
    return !((p[0] ^ q[0]) | (p[1] ^ q[1]));
}

#if defined(__x86_64__)
#include <immintrin.h>
#endif
/* Whether the run comparisons take their AVX2 form: decided once in wf_log_map, before any
 * signal, from the CPUID bits libgcc cached at load; a plain load afterwards. On deep walks
 * the comparison is most of an append: 2,048 frames (64 KiB read from two buffers) took
 * ~2,100 cycles with the compiler's 16-byte loop and ~1,250 with four 32-byte compares per
 * eight frames (hot buffers). */
static int simd_avx2;

/* Eight frames (128 bytes) of p and q equal? Plain loads of the thread's own buffers. */
static inline int same8(const struct wf_frame *p, const struct wf_frame *q) {
    const wf_word *x = (const wf_word *)p, *y = (const wf_word *)q;
    uint64_t d = 0;
    for (int i = 0; i < 16; i++) d |= x[i] ^ y[i];
    return !d;
}

#if defined(__x86_64__)
void wf_log_set_simd(int on) { simd_avx2 = on && __builtin_cpu_supports("avx2"); }

__attribute__((target("avx2"))) static inline int same8_avx2(const void *p, const void *q) {
    const __m256i *x = p, *y = q;
    __m256i d0 = _mm256_xor_si256(_mm256_loadu_si256(x), _mm256_loadu_si256(y));
    __m256i d1 = _mm256_xor_si256(_mm256_loadu_si256(x + 1), _mm256_loadu_si256(y + 1));
    __m256i d2 = _mm256_xor_si256(_mm256_loadu_si256(x + 2), _mm256_loadu_si256(y + 2));
    __m256i d3 = _mm256_xor_si256(_mm256_loadu_si256(x + 3), _mm256_loadu_si256(y + 3));
    __m256i d = _mm256_or_si256(_mm256_or_si256(d0, d1), _mm256_or_si256(d2, d3));
    return _mm256_testz_si256(d, d);
}

/* blocks8 in AVX2. The compiler ends it with vzeroupper, so the interrupted code's SSE never
 * pays for dirty upper halves (the kernel saved and restores its vector state across the
 * signal anyway). */
WF_HOT __attribute__((target("avx2"))) static uint32_t blocks8_avx2(const struct wf_frame *x, const struct wf_frame *y,
                                                             uint32_t m, int back) {
    uint32_t k = 0;
    if (back) {
        while (k + 8 <= m && same8_avx2(x - (k + 8), y - (k + 8))) k += 8;
    } else {
        while (k + 8 <= m && same8_avx2(x + k, y + k)) k += 8;
    }
    return k;
}
#else
void wf_log_set_simd(int on) { (void)on; }
#endif

/* How many of the first m frames from x and y on (back: of the m frames before x and y, from
 * the end) match, counted in whole blocks of eight only. It only skips ahead: the callers
 * finish frame by frame, so a block reported different that is not costs bytes, never a
 * wrong walk. */
WF_HOT static uint32_t blocks8(const struct wf_frame *x, const struct wf_frame *y, uint32_t m, int back) {
#if defined(__x86_64__)
    if (simd_avx2) return blocks8_avx2(x, y, m, back);
#endif
    uint32_t k = 0;
    if (back) {
        while (k + 8 <= m && same8(x - (k + 8), y - (k + 8))) k += 8;
    } else {
        while (k + 8 <= m && same8(x + k, y + k)) k += 8;
    }
    return k;
}

/* How many frames the tails of a[0, na) and b[0, nb) have in common, compared from the end
 * (the root) up: eight frames at a time while they match, then frame by frame. */
WF_HOT static uint32_t common_tail(const struct wf_frame *a, uint32_t na, const struct wf_frame *b, uint32_t nb) {
    uint32_t m = na < nb ? na : nb;
    uint32_t k = blocks8(a + na, b + nb, m, 1);
    while (k < m && same(a + na - 1 - k, b + nb - 1 - k)) k++;
    return k;
}

/* How many frames a[i, na) and b[j, nb) have in common from i and j on, the same way top
 * down. */
WF_HOT static uint32_t common_run(const struct wf_frame *a, uint32_t na, uint32_t i, const struct wf_frame *b, uint32_t nb,
                           uint32_t j) {
    uint32_t left = na - i < nb - j ? na - i : nb - j;
    uint32_t k = blocks8(a + i, b + j, left, 0);
    while (k < left && same(a + i + k, b + j + k)) k++;
    return k;
}

/* Top frames of each walk tried as the start of a run from the top. */
#define WF_CHAIN_TOP_TRIES 4

/* The longest run walk[0, n) shares with base[0, nb), as wf_samplelog.h describes: 0, or
 * at least WF_CHAIN_SHARE_MIN frames. */
WF_HOT static uint32_t best_run(const struct wf_frame *walk, uint32_t n, const struct wf_frame *base, uint32_t nb,
                         uint32_t *at, uint32_t *from) {
    uint32_t m = n < nb ? n : nb;
    /* The root-most run: it ends both walks. */
    uint32_t shared = common_tail(walk, n, base, nb);
    *at = n - shared;
    *from = nb - shared;
    /* A run from the top: the first pair of top frames (walk[i], base[j]) that match, tried
     * by i + j, then i, ascending (the leaf and the few frames next to it change from walk to
     * walk, the recursion below them need not). */
    if (shared + WF_CHAIN_SHARE_MIN < m) {
        for (uint32_t s = 0; s <= 2 * (WF_CHAIN_TOP_TRIES - 1); s++) {
            for (uint32_t i = s < WF_CHAIN_TOP_TRIES ? 0 : s - (WF_CHAIN_TOP_TRIES - 1); i <= s && i < WF_CHAIN_TOP_TRIES; i++) {
                uint32_t j = s - i;
                if (i >= n || j >= nb || !same(walk + i, base + j)) continue;
                uint32_t k = common_run(walk, n, i, base, nb, j);
                if (k > shared) shared = k, *at = i, *from = j;
                goto tried;
            }
        }
    }
tried:
    if (shared < WF_CHAIN_SHARE_MIN) shared = *at = *from = 0;
    return shared;
}

WF_HOT void wf_log_prefetch(const struct wf_chain *c) {
    uint64_t pos = __atomic_load_n(&wf_hdr->write_cursor, __ATOMIC_RELAXED);
    __builtin_prefetch(ring + (pos & ring_mask), 1, 3);
    __builtin_prefetch(ring + ((pos + 64) & ring_mask), 1, 3);
    if (c && c->base && c->nbase) {
        __builtin_prefetch(c->base + c->nbase - 1, 0, 3);
        __builtin_prefetch(c->base + c->nbase - 5, 0, 3);
    }
}

WF_HOT int wf_log_append_chain(struct wf_chain *c, struct wf_record *r, struct wf_frame **frames, int nframes) {
    struct wf_frame *walk = *frames;
    if (!c || !c->base || !c->deep || nframes <= 0 || (uint32_t)nframes > c->cap || nframes > 0xffff ||
        (uint64_t)nframes > max_frames())
        return wf_log_append_record(r, walk, nframes);
    uint32_t n = (uint32_t)nframes;
    uint32_t shared = 0, at = 0, from = 0, base_seq = 0;
    if (c->seq && c->since_full + 1 < WF_CHAIN_FULL_EVERY) {
        shared = best_run(walk, n, c->base, c->nbase, &at, &from);
        base_seq = c->seq;
        /* The deep base, when it is another walk and the previous one left much to write. */
        if (c->deep != c->base && shared + WF_CHAIN_SHARE_MIN < n) {
            uint32_t at2, from2, k = best_run(walk, n, c->deep, c->ndeep, &at2, &from2);
            if (k > shared) shared = k, at = at2, from = from2, base_seq = c->deep_seq;
        }
        if (!shared) base_seq = 0;
    }
    uint32_t seq = c->seq + 1;
    if (!seq) seq = 1; /* 0 means standalone */
    r->commit = 0;
    r->seq = seq;
    r->shared = (uint16_t)shared;
    r->at = (uint16_t)at;
    r->from = (uint16_t)from;
    r->base_seq = base_seq;
    r->len = WF_RECORD_HEADER + (n - shared) * (uint32_t)sizeof(struct wf_frame);
    uint64_t pos;
    if (claim(r->len, &pos)) return -1; /* dropped: the bases stay the last records written */
    /* The frames outside the run: walk[0, at), then walk[at+shared, n). */
    ring_put(pos + 4, (const char *)r + 4, WF_RECORD_HEADER - 4);
    uint64_t p = pos + WF_RECORD_HEADER;
    if (at) ring_put(p, walk, (size_t)at * sizeof *walk);
    if (n - at - shared) ring_put(p + (uint64_t)at * sizeof *walk, walk + at + shared, (size_t)(n - at - shared) * sizeof *walk);
    __atomic_store_n((uint32_t *)(ring + (pos & ring_mask)), wf_commit_word(pos), __ATOMIC_RELEASE);
    /* The walk is the new base, and the deep base too when it is full or as deep: buffers
     * change hands, no frame is copied. (A record claimed but torn still advances the chain:
     * the reader then does not hold the bases that name it and reports the records that use
     * them unbased, until a full one.) */
    struct wf_frame *old_base = c->base, *old_deep = c->deep, *spare = c->spare;
    c->base = walk;
    c->nbase = n;
    if (!shared || n >= c->ndeep) {
        c->deep = walk;
        c->ndeep = n;
        c->deep_seq = seq;
    }
    /* Hand back one buffer no base uses; keep another as the spare when base and deep share. */
    struct wf_frame *freed[3] = {old_base, old_deep != old_base ? old_deep : NULL, spare};
    *frames = NULL;
    c->spare = NULL;
    for (int i = 0; i < 3; i++) {
        struct wf_frame *b = freed[i];
        if (!b || b == c->deep) continue;
        if (!*frames) *frames = b;
        else c->spare = b;
    }
    c->seq = seq;
    c->since_full = shared ? c->since_full + 1 : 0;
    return 0;
}
