/* Agent entry points: Agent_OnLoad, the JVMTI events, and the service thread (heartbeat).
 * Each step is a call into the unit that owns it (config, samplelog, walkers, threads, ...). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent_thread.h"
#include "base.h"
#include "clock.h"
#include "config.h"
#include "engines.h"
#include "fault.h"
#include "handler.h"
#include "methods.h"
#include "remote.h"
#include "safepoint.h"
#include "samplelog.h"
#include "threads.h"
#include "walkers.h"
#include "wrap.h"

static jvmtiEnv *jvmti;
static jrawMonitorID tick_monitor;
static volatile int live;
static char java_version[64];

static void fail(const char *msg) {
    fprintf(stderr, "walkfuzz agent: %s\n", msg);
    wf_log_error("%s", msg);
}

static void JNICALL on_class_load(jvmtiEnv *j, JNIEnv *jni, jthread th, jclass k) {
    /* Nothing to do: the event only has to be enabled, or AsyncGetCallTrace returns -1. */
    (void)j, (void)jni, (void)th, (void)k;
}

static void JNICALL on_class_prepare(jvmtiEnv *j, JNIEnv *jni, jthread th, jclass k) {
    (void)th;
    if (live) wf_methods_class(j, jni, k);
}

/* Enabled at VMInit (not at load: a hook enabled during start-up makes the VM hand every
 * CDS-archived class's bytes to it). Only redefinitions matter: the method table re-lists the
 * class once the new version is installed. */
static void JNICALL on_class_file_load_hook(jvmtiEnv *j, JNIEnv *jni, jclass being_redefined, jobject loader,
                                            const char *name, jobject domain, jint len, const unsigned char *data,
                                            jint *new_len, unsigned char **new_data) {
    (void)j, (void)loader, (void)name, (void)domain, (void)len, (void)data, (void)new_len, (void)new_data;
    if (being_redefined) wf_methods_redefined(jni, being_redefined);
}

static void JNICALL on_vm_start(jvmtiEnv *j, JNIEnv *jni) {
    (void)j;
    wf_methods_set_thread_class(jni);
}

static char *thread_name(JNIEnv *jni, jthread th, char *buf, size_t len) {
    (void)jni;
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    buf[0] = 0;
    if ((*jvmti)->GetThreadInfo(jvmti, th, &info) == JVMTI_ERROR_NONE && info.name) {
        snprintf(buf, len, "%s", info.name);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
    }
    return buf;
}

static void JNICALL on_thread_start(jvmtiEnv *j, JNIEnv *jni, jthread th) {
    (void)j;
    char name[WF_LOG_THREAD_NAME];
    thread_name(jni, th, name, sizeof name);
    if (!strncmp(name, "walkfuzz-", 9)) return;
    if (live && !wf_stopping()) wf_threads_register(jni, th, name);
}

static void JNICALL on_thread_end(jvmtiEnv *j, JNIEnv *jni, jthread th) {
    (void)j, (void)jni, (void)th;
    wf_threads_unregister();
}

/* The service thread: heartbeat and counter folding. It is a Java thread, so when a
 * safepoint never completes (a walker wedged a thread) its RawMonitorWait cannot return,
 * the heartbeat stops, and the harness sees the hang. */
static void JNICALL service_main(jvmtiEnv *j, JNIEnv *jni, void *arg) {
    (void)jni, (void)arg;
    while (!wf_stopping()) {
        (*j)->RawMonitorEnter(j, tick_monitor);
        (*j)->RawMonitorWait(j, tick_monitor, 50);
        (*j)->RawMonitorExit(j, tick_monitor);
        /* A thread inside our handler for seconds (a walker wedged, or spinning) is a hang
         * even when the VM itself keeps going: stop the heartbeat so the harness sees it. */
        wf_methods_relist(j, jni);
        wf_methods_sweep(j, jni, 0);
        wf_clock_tick();
        if (wf_cfg->wrap_signo) wf_wrap_tick();
        if (wf_threads_tick()) continue;
        struct wf_log_header *hdr = wf_log_header();
        __atomic_store_n(&hdr->heartbeat_ns, wf_now_ns(), __ATOMIC_RELEASE);
        __atomic_fetch_add(&hdr->heartbeat_count, 1, __ATOMIC_RELAXED);
    }
}

static void JNICALL on_vm_init(jvmtiEnv *j, JNIEnv *jni, jthread th) {
    int walkers;
    const struct wf_walker *const *ws = wf_walkers_list(&walkers);
    /* Walkers and signal handlers first, live after: a thread that starts while the classes
     * are listed below is registered at once and its signal engine armed, so its first signal
     * must find our handler installed and the walkers initialized. (With the handler installed
     * after the listing, a thread started meanwhile got SIGPROF under its default action at a
     * 20 us interval: the JVM died 258 ms in, "killed by profiling timer expired", a crash of
     * walkfuzz's making filed as a finding.) */
    wf_walkers_vm_init(j, jni);
    /* The registry runs the engine's per-thread hooks; without an in-process walker no
     * thread is signalled. */
    struct wf_threads_setup ts = {
        .walkers = walkers,
        .nested = wf_signals.two_engines,
        .attach = walkers ? wf_engine_thread_start : NULL,
        .detach = wf_engine_thread_stop,
        .tick = wf_engine_account,
    };
    wf_threads_setup(&ts);
    wf_clock_init();
    wf_budget_init();
    /* wrap=SIGNO: our handler goes in front of the one the agents before ours installed
     * (their VMInit ran first), instead of on a signal of our own. */
    if (wf_fault_install() || (walkers && (wf_cfg->wrap_signo ? wf_wrap_install() : wf_handler_install()))) {
        fail("cannot install signal handlers");
        return;
    }
    /* Live before listing classes: a class prepared in between is written twice, never lost. */
    live = 1;
    jint n = 0;
    jclass *classes = NULL;
    if ((*j)->GetLoadedClasses(j, &n, &classes) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < n; i++) {
            wf_methods_class(j, jni, classes[i]);
            (*jni)->DeleteLocalRef(jni, classes[i]);
        }
        (*j)->Deallocate(j, (unsigned char *)classes);
    }
    (*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
    if (wf_agent_thread(j, jni, "walkfuzz-service", service_main)) fail("cannot start the service thread");
    if (wf_safepoint_start(j, jni, wf_walkers_need_safepoint(), wf_walkers_reference())) fail("cannot start the safepoint service thread");
    if (walkers && wf_remote_start(ws, walkers)) fail("cannot start the remote-walk thread");
    if (walkers && wf_engine_start()) fail("cannot start the signal engine");
    char name[WF_LOG_THREAD_NAME];
    if (!wf_stopping()) wf_threads_register(jni, th, thread_name(jni, th, name, sizeof name));
    struct wf_log_header *hdr = wf_log_header();
    if (__atomic_load_n(&hdr->agent_state, __ATOMIC_ACQUIRE) != WF_STATE_FAILED)
        __atomic_store_n(&hdr->agent_state, WF_STATE_SAMPLING, __ATOMIC_RELEASE);
}

static void JNICALL on_vm_death(jvmtiEnv *j, JNIEnv *jni) {
    (void)j, (void)jni;
    wf_engine_stop();
    wf_remote_stop(); /* after the engine: no new walk is handed over, a parked one is released */
    wf_threads_tick();
    wf_methods_sweep(j, jni, 1);
    wf_methods_close();
    struct wf_log_header *hdr = wf_log_header();
    if (__atomic_load_n(&hdr->agent_state, __ATOMIC_ACQUIRE) != WF_STATE_FAILED)
        __atomic_store_n(&hdr->agent_state, WF_STATE_EXITED, __ATOMIC_RELEASE);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
    (void)reserved;
    char err[256];
    const char *conf = options && !strncmp(options, "config=", 7) ? options + 7 : NULL;
    if (!conf) {
        fprintf(stderr, "walkfuzz agent: expected -agentpath:libwalkfuzz.so=config=PATH\n");
        return JNI_ERR;
    }
    if (wf_config_load(conf, err, sizeof err) || wf_engine_select(wf_cfg->mode, err, sizeof err) ||
        wf_log_map(wf_cfg->log_path, err, sizeof err)) {
        fprintf(stderr, "walkfuzz agent: %s\n", err);
        return JNI_ERR;
    }
    struct wf_log_header *hdr = wf_log_header();
    hdr->agent_pid = getpid();
    hdr->start_ns = wf_now_ns();
    wf_clock_pair(&hdr->clock_realtime_ns, &hdr->clock_monotonic_ns);
    hdr->max_depth = (uint64_t)wf_cfg->depth;
    hdr->interval_ns = wf_cfg->interval_ns;

    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        fail("JVMTI 1.2 is not available");
        return JNI_ERR;
    }
    if (wf_cfg->bytecodes) {
        /* For the frame-validity oracle; an always-available capability in HotSpot that
         * changes nothing in how code is compiled or run. */
        jvmtiCapabilities caps;
        memset(&caps, 0, sizeof caps);
        caps.can_get_bytecodes = 1;
        wf_methods_bytecodes((*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE);
        /* The invokes' targets (P lines): always available in HotSpot too. */
        memset(&caps, 0, sizeof caps);
        caps.can_get_constant_pool = 1;
        wf_methods_pool((*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE);
    }
    {
        /* To mark the classes written to the method table (wf_methods_sweep); tags change
         * nothing in how code is compiled or run. */
        jvmtiCapabilities caps;
        memset(&caps, 0, sizeof caps);
        caps.can_tag_objects = 1;
        wf_methods_tags((*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE);
    }
    /* In the OnLoad phase only VM-defined properties exist: java.vm.version, not java.version. */
    char *v = NULL;
    if ((*jvmti)->GetSystemProperty(jvmti, "java.vm.version", &v) == JVMTI_ERROR_NONE && v) {
        snprintf(java_version, sizeof java_version, "%s", v);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)v);
    }
    if (wf_methods_open(wf_cfg->methods_path)) {
        snprintf(err, sizeof err, "cannot write method table %.200s", wf_cfg->methods_path);
        fail(err);
        return JNI_ERR;
    }
    if (wf_walkers_setup(vm, jvmti, wf_cfg->walkers, wf_cfg->depth, java_version, wf_cfg->reference_pct > 0, err,
                         sizeof err)) {
        fail(err);
        return JNI_ERR;
    }
    wf_walkers_write_codes(wf_cfg->codes_path);

    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.VMStart = on_vm_start;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.ClassLoad = on_class_load;
    cb.ClassPrepare = on_class_prepare;
    cb.ClassFileLoadHook = on_class_file_load_hook;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    jvmtiEvent evs[] = {JVMTI_EVENT_VM_INIT,     JVMTI_EVENT_VM_DEATH,   JVMTI_EVENT_VM_START,
                        JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END, JVMTI_EVENT_CLASS_LOAD,
                        JVMTI_EVENT_CLASS_PREPARE};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, evs[i], NULL);
    (*jvmti)->CreateRawMonitor(jvmti, "walkfuzz-tick", &tick_monitor);
    __atomic_store_n(&hdr->agent_state, WF_STATE_LOADED, __ATOMIC_RELEASE);
    return JNI_OK;
}
