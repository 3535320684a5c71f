/* The method table: jmethodID -> class, name, signature, max bci, flags, written outside
 * signal context as classes are prepared, so the harness can name what walkers return.
 * Creating the jmethodIDs here (GetClassMethods) is also what makes AsyncGetCallTrace work.
 * With can_get_bytecodes, a B line after a method's M line carries its bytecode (hex), from
 * which the harness checks that a frame's bci starts an instruction and that a caller's bci
 * is an invoke (the frame-validity oracle); with can_get_constant_pool too, a P line before
 * the class's M lines names the method each of its invokes calls, so the harness checks that
 * a caller's invoke calls the frame above it. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base.h"
#include "fault.h"
#include "knownstack.h"
#include "methods.h"

static FILE *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static jclass thread_class; /* global ref to java.lang.Thread, for the 't' flag */
static int with_bytecodes; /* the JVM granted can_get_bytecodes */
static int with_tags; /* the JVM granted can_tag_objects: written classes are tagged */

static int with_pool; /* the JVM granted can_get_constant_pool */
void wf_methods_bytecodes(int on) { with_bytecodes = on; }
void wf_methods_pool(int on) { with_pool = on; }
void wf_methods_tags(int on) { with_tags = on; }

/* B\t0x<id>\t<hex bytecode>: GetBytecodes gives the method's bytecode as in the class file
 * (the VM's rewritten fast bytecodes turned back). */
static void bytecodes(jvmtiEnv *jvmti, jmethodID m) {
    jint len = 0;
    unsigned char *code = NULL;
    if ((*jvmti)->GetBytecodes(jvmti, m, &len, &code) != JVMTI_ERROR_NONE || !code) return;
    static const char hex[] = "0123456789abcdef";
    fprintf(out, "B\t0x%llx\t", (unsigned long long)(uintptr_t)m);
    for (jint i = 0; i < len; i++) {
        fputc(hex[code[i] >> 4], out);
        fputc(hex[code[i] & 15], out);
    }
    fputc('\n', out);
    (*jvmti)->Deallocate(jvmti, code);
}

static void field(FILE *f, const char *s);

static unsigned u2(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }

/* The CONSTANT_Utf8 at entry i (off[i] is its tag's offset + 1, 0 for no entry), or NULL. */
static const unsigned char *utf8_at(const unsigned char *cp, jint len, const uint32_t *off, jint count,
                                    unsigned i, unsigned *n) {
    if (i == 0 || i >= (unsigned)count || !off[i]) return NULL;
    uint32_t at = off[i] - 1;
    if (cp[at] != 1 || at + 3 > (uint32_t)len) return NULL;
    *n = u2(cp + at + 1);
    return at + 3 + *n <= (uint32_t)len ? cp + at + 3 : NULL;
}

/* The u2 operand k (0 or 1) of the entry i with tag, or 0. */
static unsigned operand(const unsigned char *cp, jint len, const uint32_t *off, jint count, unsigned i,
                        int tag, int k) {
    if (i == 0 || i >= (unsigned)count || !off[i]) return 0;
    uint32_t at = off[i] - 1;
    if (cp[at] != tag || at + 5 > (uint32_t)len) return 0;
    return u2(cp + at + 1 + 2 * k);
}

static void pool_name(const unsigned char *s, unsigned n) {
    /* Modified UTF-8 as GetMethodName gives it; ';' cannot occur in a method name (JVMS
     * 4.2.2), it separates the entries: keep the line parseable if a class breaks the rule. */
    for (unsigned i = 0; i < n; i++) fputc(s[i] == '\t' || s[i] == '\n' || s[i] == ';' ? ' ' : s[i], out);
}

/* P\t<class signature>\t<index>=<name>;...: for each CONSTANT_Methodref and
 * InterfaceMethodref of the class's constant pool (GetConstantPool: class-file format, the
 * indices GetBytecodes' invokes use), the name of the method it calls; "*" for the
 * signature-polymorphic ones of MethodHandle and VarHandle, which call whatever the handle
 * is linked to. Written before the class's M lines, under the table's lock. A pool this
 * reader does not understand (a tag newer than it) writes no line: no check, never a wrong
 * one. */
static void pool(jvmtiEnv *jvmti, jclass klass, const char *csig) {
    jint count = 0, len = 0;
    unsigned char *cp = NULL;
    if ((*jvmti)->GetConstantPool(jvmti, klass, &count, &len, &cp) != JVMTI_ERROR_NONE || !cp) return;
    uint32_t *off = count > 0 ? calloc((size_t)count, sizeof *off) : NULL;
    int ok = off != NULL;
    uint32_t at = 0;
    for (jint i = 1; ok && i < count; i++) {
        if (at >= (uint32_t)len) { ok = 0; break; }
        off[i] = at + 1;
        switch (cp[at]) {
        case 1: /* Utf8 */
            if (at + 3 > (uint32_t)len) ok = 0;
            else at += 3 + u2(cp + at + 1);
            break;
        case 3: case 4: at += 5; break;              /* Integer, Float */
        case 5: case 6: at += 9; i++; break;         /* Long, Double: two entries */
        case 7: case 8: case 16: case 19: case 20: at += 3; break; /* Class, String, MethodType, Module, Package */
        case 9: case 10: case 11: case 12: case 17: case 18: at += 5; break; /* refs, NameAndType, Dynamic, InvokeDynamic */
        case 15: at += 4; break;                     /* MethodHandle */
        default: ok = 0;
        }
        if (at > (uint32_t)len) ok = 0;
    }
    if (ok) {
        fputs("P\t", out);
        field(out, csig);
        fputc('\t', out);
        int first = 1;
        for (jint i = 1; i < count; i++) {
            if (!off[i] || (cp[off[i] - 1] != 10 && cp[off[i] - 1] != 11)) continue;
            int tag = cp[off[i] - 1];
            unsigned cls = operand(cp, len, off, count, (unsigned)i, tag, 0);
            unsigned nat = operand(cp, len, off, count, (unsigned)i, tag, 1);
            unsigned cn = 0, nn = 0;
            const unsigned char *cname = utf8_at(cp, len, off, count, operand(cp, len, off, count, cls, 7, 0), &cn);
            const unsigned char *name = utf8_at(cp, len, off, count, operand(cp, len, off, count, nat, 12, 0), &nn);
            if (!cname || !name) continue;
            fprintf(out, "%s%d=", first ? "" : ";", (int)i);
            first = 0;
            if ((cn == 29 && !memcmp(cname, "java/lang/invoke/MethodHandle", 29)) ||
                (cn == 26 && !memcmp(cname, "java/lang/invoke/VarHandle", 26)))
                fputc('*', out);
            else
                pool_name(name, nn);
        }
        fputc('\n', out);
    }
    free(off);
    (*jvmti)->Deallocate(jvmti, cp);
}

int wf_methods_open(const char *path) {
    if (!path[0]) return 0;
    out = fopen(path, "we");
    return out ? 0 : -1;
}

void wf_methods_set_thread_class(JNIEnv *jni) {
    jclass c = (*jni)->FindClass(jni, "java/lang/Thread");
    if (c) thread_class = (*jni)->NewGlobalRef(jni, c);
    (*jni)->ExceptionClear(jni);
}

static void field(FILE *f, const char *s) {
    /* Names never hold tabs or newlines in practice; keep the format safe if one ever does. */
    for (; s && *s; s++) fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
}

/* swept: the class is written by the sweep, no event announced it (flag 'w'). */
static int write_class(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, int swept) {
    jint n = 0;
    jmethodID *ms = NULL;
    /* Fails for a class loaded but not yet prepared: it is left untagged, for a later sweep. */
    if ((*jvmti)->GetClassMethods(jvmti, klass, &n, &ms) != JVMTI_ERROR_NONE) return 0;
    char *csig = NULL;
    if (!out || (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL) != JVMTI_ERROR_NONE) {
        (*jvmti)->Deallocate(jvmti, (unsigned char *)ms);
        return 0;
    }
    wf_knownstack_bind(jvmti, jni, klass, csig);
    int is_thread = thread_class && jni && (*jni)->IsAssignableFrom(jni, klass, thread_class);

    pthread_mutex_lock(&lock);
    if (with_bytecodes && with_pool) pool(jvmti, klass, csig);
    for (jint i = 0; i < n; i++) {
        char *name = NULL, *sig = NULL;
        if ((*jvmti)->GetMethodName(jvmti, ms[i], &name, &sig, NULL) != JVMTI_ERROR_NONE) continue;
        jint mods = 0;
        (*jvmti)->GetMethodModifiers(jvmti, ms[i], &mods);
        jlocation start = -1, end = -1;
        if ((*jvmti)->GetMethodLocation(jvmti, ms[i], &start, &end) != JVMTI_ERROR_NONE) end = -1;
        char flags[8];
        int k = 0;
        if (mods & 0x0100) flags[k++] = 'n'; /* ACC_NATIVE */
        if (mods & 0x0008) flags[k++] = 's'; /* ACC_STATIC */
        if (is_thread) flags[k++] = 't';
        if (swept) flags[k++] = 'w';
        if (!k) flags[k++] = '-';
        flags[k] = 0;
        fprintf(out, "M\t0x%llx\t", (unsigned long long)(uintptr_t)ms[i]);
        field(out, csig);
        fputc('\t', out);
        field(out, name);
        fputc('\t', out);
        field(out, sig);
        fprintf(out, "\t%lld\t%s", (long long)end, flags);
        /* A swept method had no jmethodID before this write, so the vmstructs walker named it
         * by its raw Method* (VS_RAW_METHOD_BIT): a HotSpot jmethodID points at the slot
         * holding its Method*, written for the harness to map the raw one back. Read
         * crash-protected (the sweep runs after VMInit installed the fault handler): a VM
         * whose jmethodIDs are no pointers gets no field, or one no walk reports. */
        uintptr_t mp = 0;
        if (swept && wf_safe_read((const void *)ms[i], &mp, sizeof mp) == 0 && mp && !(mp >> 63))
            fprintf(out, "\t0x%llx", (unsigned long long)mp);
        fputc('\n', out);
        if (with_bytecodes && !(mods & 0x0500)) bytecodes(jvmti, ms[i]); /* not native or abstract */
        (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    }
    /* One flush per class: what was prepared before a crash is on disk after it. */
    fflush(out);
    pthread_mutex_unlock(&lock);
    if (with_tags) (*jvmti)->SetTag(jvmti, klass, WF_METHODS_WRITTEN);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)ms);
    return 1;
}

void wf_methods_class(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass) { (void)write_class(jvmti, jni, klass, 0); }

/* Classes being redefined or retransformed, re-listed by the service thread once the new
 * version is in place: the hook runs while the new bytes are parsed, before the VM installs
 * them at a safepoint, so a class is listed again once it has been queued 20 ms, and a second
 * time after a second in case that safepoint came late (a repeated listing changes nothing).
 * A fixed array under the table's lock: the hook is a JVMTI callback, never signal context.
 * A full queue drops the class: its walks may then be judged against the old bytecode. */
#define WF_REDEFINED_MAX 256
static struct redefined {
    jclass klass; /* global ref */
    uint64_t queued_ns;
    int listed; /* times listed since queued */
} redefined[WF_REDEFINED_MAX];
static int nredefined;

void wf_methods_redefined(JNIEnv *jni, jclass klass) {
    if (!out || !jni || !klass) return;
    uint64_t now = wf_now_ns();
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nredefined; i++) {
        if ((*jni)->IsSameObject(jni, redefined[i].klass, klass)) {
            redefined[i].queued_ns = now;
            redefined[i].listed = 0;
            pthread_mutex_unlock(&lock);
            return;
        }
    }
    if (nredefined < WF_REDEFINED_MAX) {
        jclass g = (*jni)->NewGlobalRef(jni, klass);
        if (g) redefined[nredefined++] = (struct redefined){g, now, 0};
    }
    pthread_mutex_unlock(&lock);
}

void wf_methods_relist(jvmtiEnv *jvmti, JNIEnv *jni) {
    jclass due[WF_REDEFINED_MAX], done[WF_REDEFINED_MAX];
    int ndue = 0, ndone = 0;
    uint64_t now = wf_now_ns();
    pthread_mutex_lock(&lock);
    int keep = 0;
    for (int i = 0; i < nredefined; i++) {
        struct redefined *r = &redefined[i];
        uint64_t age = now - r->queued_ns;
        if ((r->listed == 0 && age >= 20000000ull) || (r->listed == 1 && age >= 1000000000ull)) {
            due[ndue++] = r->klass;
            r->listed++;
        }
        if (r->listed >= 2) done[ndone++] = r->klass;
        else redefined[keep++] = *r;
    }
    nredefined = keep;
    pthread_mutex_unlock(&lock);
    /* The same jmethodIDs now name the new version's methods (HotSpot moves each id to the
     * method that replaces it); the harness keeps every version's bytecode per id. */
    for (int i = 0; i < ndue; i++) wf_methods_class(jvmti, jni, due[i]);
    for (int i = 0; i < ndone; i++) (*jni)->DeleteGlobalRef(jni, done[i]);
}

/* Classes the JVM never reported: JDK 21+ posts no ClassPrepare for a class loaded on a
 * virtual thread to an agent without can_support_virtual_threads (which we do not add: it
 * changes how the VM runs them). Every 250 ms the service thread lists the loaded classes and
 * writes each one not tagged as written. A class prepared meanwhile may be written twice (the
 * harness accepts duplicate M lines), never missed. GetLoadedClasses returns strong local refs,
 * so a class unloaded concurrently stays valid until the frame is popped.
 * A sweep that wrote classes ends with S <tab> start ns <tab> end ns (CLOCK_MONOTONIC, the
 * walks' clock): until its end, the methods it wrote had no jmethodID, so a walk taken
 * before it may name one by none (ASGCT's null id) or by its raw Method* (vmstructs). */
void wf_methods_sweep(jvmtiEnv *jvmti, JNIEnv *jni, int force) {
    static uint64_t last_ns; /* service thread and VMDeath */
    uint64_t now = wf_now_ns();
    if (!out || !jni || !with_tags) return;
    if (!force && now - __atomic_load_n(&last_ns, __ATOMIC_RELAXED) < 250000000ull) return;
    __atomic_store_n(&last_ns, now, __ATOMIC_RELAXED);
    if ((*jni)->PushLocalFrame(jni, 16) != 0) {
        (*jni)->ExceptionClear(jni);
        return;
    }
    jint n = 0, wrote = 0;
    jclass *classes = NULL;
    if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n; i++) {
            jlong tag = 0;
            if ((*jvmti)->GetTag(jvmti, classes[i], &tag) == JVMTI_ERROR_NONE && tag != WF_METHODS_WRITTEN)
                wrote += write_class(jvmti, jni, classes[i], 1);
            (*jni)->DeleteLocalRef(jni, classes[i]);
        }
        (*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
    }
    (*jni)->PopLocalFrame(jni, NULL);
    if (wrote) {
        pthread_mutex_lock(&lock);
        fprintf(out, "S\t%llu\t%llu\n", (unsigned long long)now, (unsigned long long)wf_now_ns());
        fflush(out);
        pthread_mutex_unlock(&lock);
    }
}

void wf_methods_close(void) {
    pthread_mutex_lock(&lock);
    if (out) fflush(out);
    pthread_mutex_unlock(&lock);
}
