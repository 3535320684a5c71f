/* VMStructs table lookup (tables.c): init time only. */
#ifndef VS_TABLES_H
#define VS_TABLES_H

#include <stddef.h>
#include <stdint.h>

/* A field as the walker uses it: offset (instance field) or address (static field), and its width. */
struct vs_field {
    int64_t off;     /* -1: absent */
    uintptr_t addr;  /* static fields */
    int size;        /* bytes, from the type string (0 = unknown) */
    int alt;         /* which alternative name matched (see layout.c) */
};

/* Finds the tables in libjvm (handle, or the process when NULL) and reads
 * WALKFUZZ_VMSTRUCTS_HIDE. 0, or -1 with "unsupported JDK <ver>: ..." in err. */
int vs_tables_open(void *libjvm, const char *ver, char *err, size_t errlen);
/* "Type::field" of the structs table; off = -1 when absent or hidden. */
struct vs_field vs_field_lookup(const char *type, const char *field);
/* sizeof(Type) from the types table, -1 when absent. */
int64_t vs_type_size(const char *type);
/* An int constant: 1 and *out, or 0 when absent. */
int vs_int_constant(const char *name, int *out);
/* Whether a name ("Type::field", "sizeof(Type)", a constant) is hidden by
 * WALKFUZZ_VMSTRUCTS_HIDE, which tests use to play an unsupported JDK. */
int vs_hidden(const char *name);

#endif
