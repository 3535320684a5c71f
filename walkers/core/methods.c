/* The method table: jmethodID -> class, name, signature, max bci, flags, written outside
 * signal context as classes are prepared, so the harness can name what walkers return.
 * Creating the jmethodIDs here (GetClassMethods) is also what makes AsyncGetCallTrace work.
 * With can_get_bytecodes, a B line after a method's M line carries its bytecode (hex), from
 * which the harness checks that a frame's bci starts an instruction and that a caller's bci
 * is an invoke (the frame-validity oracle). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
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

void wf_methods_bytecodes(int on) { with_bytecodes = on; }
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
