/* VMStructs table lookup (tables.c): HotSpot's exported serviceability tables
 * (gHotSpotVMStructs, gHotSpotVMTypes, gHotSpotVMIntConstants, gHotSpotVMLongConstants),
 * searched by type and field name. Used at init only, never in signal context. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tables.h"

struct vs_tables {
    const char *structs, *types, *ints, *longs;
    uint64_t s_stride, s_type, s_field, s_typestr, s_static, s_offset, s_address;
    uint64_t t_stride, t_name, t_size;
    uint64_t i_stride, i_name, i_value;
    uint64_t l_stride, l_name, l_value;
};

/* libjvm's exported tables and their entry layouts, found by vs_tables_open. */
static struct vs_tables tables;
static const char *hide_list; /* WALKFUZZ_VMSTRUCTS_HIDE, read in init only */

/* Is this name (a "Type::field", "sizeof(Type)" or constant name) in WALKFUZZ_VMSTRUCTS_HIDE? */
int vs_hidden(const char *name) {
    if (!hide_list) return 0;
    size_t nl = strlen(name);
    for (const char *p = hide_list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && *p == ' ') p++, len--;
        while (len && p[len - 1] == ' ') len--;
        if (len == nl && !strncmp(p, name, nl)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

static int hidden(const char *type, const char *field) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s::%s", type, field);
    return vs_hidden(buf);
}

static int type_width(const char *t) {
    if (!t) return 0;
    size_t n = strlen(t);
    if (n && t[n - 1] == '*') return 8;
    if (!strncmp(t, "volatile ", 9)) t += 9;
    static const struct { const char *name; int w; } w[] = {
        {"address", 8}, {"intptr_t", 8}, {"uintptr_t", 8}, {"size_t", 8}, {"jlong", 8},
        {"long", 8}, {"int64_t", 8}, {"uint64_t", 8}, {"julong", 8},
        {"int", 4}, {"jint", 4}, {"juint", 4}, {"uint", 4}, {"uint32_t", 4}, {"int32_t", 4},
        {"u4", 4}, {"unsigned int", 4}, {"JavaThreadState", 4},
        {"int16_t", 2}, {"uint16_t", 2}, {"u2", 2}, {"jushort", 2}, {"jshort", 2},
        {"short", 2}, {"AccessFlags", 0},
        {"u1", 1}, {"bool", 1}, {"uint8_t", 1}, {"int8_t", 1}, {"signed char", 1},
        {"CodeBlobKind", 1}, {"jbyte", 1}, {"jboolean", 1},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        if (!strcmp(t, w[i].name)) return w[i].w;
    return 0;
}

struct vs_field vs_field_lookup(const char *type, const char *field) {
    struct vs_field f = {-1, 0, 0, 0};
    if (hidden(type, field)) return f;
    for (const char *e = tables.structs;; e += tables.s_stride) {
        const char *t = *(const char *const *)(e + tables.s_type);
        if (!t) break;
        const char *fn = *(const char *const *)(e + tables.s_field);
        if (!fn || strcmp(t, type) || strcmp(fn, field)) continue;
        int is_static = *(const int32_t *)(e + tables.s_static);
        f.size = type_width(*(const char *const *)(e + tables.s_typestr));
        if (is_static) {
            f.addr = (uintptr_t) * (void *const *)(e + tables.s_address);
            f.off = 0;
        } else {
            f.off = (int64_t) * (const uint64_t *)(e + tables.s_offset);
        }
        return f;
    }
    return f;
}

int64_t vs_type_size(const char *type) {
    for (const char *e = tables.types;; e += tables.t_stride) {
        const char *t = *(const char *const *)(e + tables.t_name);
        if (!t) break;
        if (!strcmp(t, type)) return (int64_t) * (const uint64_t *)(e + tables.t_size);
    }
    return -1;
}

int vs_int_constant(const char *name, int *out) {
    for (const char *e = tables.ints;; e += tables.i_stride) {
        const char *t = *(const char *const *)(e + tables.i_name);
        if (!t) break;
        if (!strcmp(t, name)) {
            *out = *(const int32_t *)(e + tables.i_value);
            return 1;
        }
    }
    return 0;
}

int vs_tables_open(void *libjvm, const char *ver, char *err, size_t errlen) {
    void *h = libjvm ? libjvm : dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
#define SYM(var, name)                                                                   \
    do {                                                                                 \
        void *p_ = h ? dlsym(h, name) : NULL;                                            \
        if (!p_) p_ = dlsym(RTLD_DEFAULT, name);                                         \
        if (!p_) {                                                                       \
            snprintf(err, errlen, "unsupported JDK %s: libjvm does not export %s", ver, name); \
            return -1;                                                                   \
        }                                                                                \
        var = *(const uint64_t *)p_;                                                     \
    } while (0)
    uint64_t p;
    SYM(p, "gHotSpotVMStructs"); tables.structs = (const char *)p;
    SYM(p, "gHotSpotVMTypes"); tables.types = (const char *)p;
    SYM(p, "gHotSpotVMIntConstants"); tables.ints = (const char *)p;
    SYM(p, "gHotSpotVMLongConstants"); tables.longs = (const char *)p;
    SYM(tables.s_stride, "gHotSpotVMStructEntryArrayStride");
    SYM(tables.s_type, "gHotSpotVMStructEntryTypeNameOffset");
    SYM(tables.s_field, "gHotSpotVMStructEntryFieldNameOffset");
    SYM(tables.s_typestr, "gHotSpotVMStructEntryTypeStringOffset");
    SYM(tables.s_static, "gHotSpotVMStructEntryIsStaticOffset");
    SYM(tables.s_offset, "gHotSpotVMStructEntryOffsetOffset");
    SYM(tables.s_address, "gHotSpotVMStructEntryAddressOffset");
    SYM(tables.t_stride, "gHotSpotVMTypeEntryArrayStride");
    SYM(tables.t_name, "gHotSpotVMTypeEntryTypeNameOffset");
    SYM(tables.t_size, "gHotSpotVMTypeEntrySizeOffset");
    SYM(tables.i_stride, "gHotSpotVMIntConstantEntryArrayStride");
    SYM(tables.i_name, "gHotSpotVMIntConstantEntryNameOffset");
    SYM(tables.i_value, "gHotSpotVMIntConstantEntryValueOffset");
    SYM(tables.l_stride, "gHotSpotVMLongConstantEntryArrayStride");
    SYM(tables.l_name, "gHotSpotVMLongConstantEntryNameOffset");
    SYM(tables.l_value, "gHotSpotVMLongConstantEntryValueOffset");
#undef SYM
    if (!tables.structs || !tables.types || !tables.ints || !tables.s_stride || !tables.t_stride || !tables.i_stride) {
        snprintf(err, errlen, "unsupported JDK %s: VMStructs tables are empty", ver);
        return -1;
    }
    hide_list = getenv("WALKFUZZ_VMSTRUCTS_HIDE");
    return 0;
}
