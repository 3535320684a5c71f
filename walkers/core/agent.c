/* Agent entry points: configuration, JVMTI events, walker set-up and the service thread. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent.h"
#include "wf_jvmti.h"

struct wf_config wf_cfg;
const struct wf_walker *wf_walkers[WF_LOG_MAX_WALKERS];
int wf_nwalkers;
volatile int wf_stopping;

extern const struct wf_walker wf_asgct_walker;
extern const struct wf_walker wf_vmstructs_walker __attribute__((weak));

static jvmtiEnv *jvmti;
static jrawMonitorID tick_monitor;
static volatile int live;
static char java_version[64];

static void fail(const char *msg) {
    fprintf(stderr, "walkfuzz agent: %s\n", msg);
    wf_log_error("%s", msg);
}

static const struct wf_walker *load_plugin(const char *path, char *err, size_t errlen) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "cannot load walker plugin %s: %s", path, dlerror());
        return NULL;
    }
    const struct wf_walker *(*entry)(void);
    *(void **)&entry = dlsym(h, "walkfuzz_walker");
    const struct wf_walker *w = entry ? entry() : NULL;
    if (!w) {
        snprintf(err, errlen, "walker plugin %s does not export walkfuzz_walker()", path);
        return NULL;
    }
    if (w->abi != WF_WALKER_ABI) {
        snprintf(err, errlen, "walker plugin %s has ABI %u, this agent speaks ABI %u: rebuild it against walkers/include/wf_walker.h",
                 path, w->abi, WF_WALKER_ABI);
        return NULL;
    }
    if (!w->walk || !w->name) {
        snprintf(err, errlen, "walker plugin %s has no walk function or name", path);
        return NULL;
    }
    return w;
}

static int setup_walkers(JavaVM *vm, char *err, size_t errlen) {
    struct wf_walker_env env = {
        .vm = vm,
        .jvmti = jvmti,
        .libjvm = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD),
        .max_depth = wf_cfg.depth,
        .java_version = java_version,
        .safe_read = wf_safe_read,
    };
    char list[sizeof wf_cfg.walkers];
    snprintf(list, sizeof list, "%s", wf_cfg.walkers);
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (wf_nwalkers == WF_LOG_MAX_WALKERS) {
            snprintf(err, errlen, "at most %d walkers in one run", WF_LOG_MAX_WALKERS);
            return -1;
        }
        const struct wf_walker *w = NULL;
        if (!strcmp(name, "asgct")) w = &wf_asgct_walker;
        else if (!strcmp(name, "vmstructs")) {
            w = &wf_vmstructs_walker;
            if (!w) {
                snprintf(err, errlen, "unsupported: this agent was built without the vmstructs walker");
                return -1;
            }
        } else if (!strcmp(name, "jvmti")) {
            w = &wf_jvmti_walker;
        } else if (!strcmp(name, "jvmti-emulated")) {
            w = &wf_jvmti_emulated_walker;
            wf_emulated_walker = wf_nwalkers;
        } else if (!strncmp(name, "plugin:", 7)) {
            w = load_plugin(name + 7, err, errlen);
            if (!w) return -1;
        } else {
            snprintf(err, errlen, "unknown walker %s", name);
            return -1;
        }
        if (w->init && w->init(&env, err, errlen)) return -1;
        if (w == &wf_jvmti_walker) {
            wf_jvmti_api.env = jvmti;
            wf_jvmti_api.walker_index = wf_nwalkers;
        }
        snprintf(wf_hdr->walker_names[wf_nwalkers], WF_LOG_WALKER_NAME, "%s%s",
                 !strncmp(name, "plugin:", 7) ? "plugin:" : "", w->name);
        wf_walkers[wf_nwalkers++] = w;
    }
    /* No in-process walker (only eBPF or JFR sample this JVM): the agent still keeps the
     * heartbeat and the method table, and sends no signals. */
    if (wf_cfg.reference_pct) {
        if (wf_nwalkers == WF_LOG_MAX_WALKERS) {
            snprintf(err, errlen, "no room for the reference oracle beside %d walkers", wf_nwalkers);
            return -1;
        }
        /* Reference traces get their own walker index (a name, not a walk function). */
        wf_reference_walker = wf_nwalkers;
        snprintf(wf_hdr->walker_names[wf_nwalkers], WF_LOG_WALKER_NAME, "reference");
    }
    return 0;
}

/* Every walker's code names go to a side file, so the harness can name plugin codes too. */
static void write_codes(void) {
    if (!wf_cfg.codes_path[0]) return;
    FILE *f = fopen(wf_cfg.codes_path, "we");
    if (!f) return;
    for (int i = 0; i < wf_nwalkers; i++) {
        if (!wf_walkers[i]->code_name) continue;
        for (int code = 0; code >= -256; code--) {
            const char *n = wf_walkers[i]->code_name(code);
            if (n) fprintf(f, "%s\t%d\t%s\n", wf_hdr->walker_names[i], code, n);
        }
    }
    fclose(f);
}

static void JNICALL on_class_load(jvmtiEnv *j, JNIEnv *jni, jthread th, jclass k) {
    /* Nothing to do: the event only has to be enabled, or AsyncGetCallTrace returns -1. */
    (void)j, (void)jni, (void)th, (void)k;
}

static void JNICALL on_class_prepare(jvmtiEnv *j, JNIEnv *jni, jthread th, jclass k) {
    (void)th;
    if (live) wf_methods_class(j, jni, k);
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
    if (live) wf_threads_register(jni, th, name);
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
    while (!wf_stopping) {
        (*j)->RawMonitorEnter(j, tick_monitor);
        (*j)->RawMonitorWait(j, tick_monitor, 50);
        (*j)->RawMonitorExit(j, tick_monitor);
        /* A thread inside our handler for seconds (a walker wedged, or spinning) is a hang
         * even when the VM itself keeps going: stop the heartbeat so the harness sees it. */
        if (wf_threads_tick()) continue;
        __atomic_store_n(&wf_hdr->heartbeat_ns, wf_now_ns(), __ATOMIC_RELEASE);
        __atomic_fetch_add(&wf_hdr->heartbeat_count, 1, __ATOMIC_RELAXED);
    }
}

/* Starts a JVMTI agent thread (a daemon Java thread running native code) named name. */
int wf_agent_thread(jvmtiEnv *j, JNIEnv *jni, const char *name, jvmtiStartFunction fn) {
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    jmethodID init = tc ? (*jni)->GetMethodID(jni, tc, "<init>", "(Ljava/lang/String;)V") : NULL;
    jstring nm = (*jni)->NewStringUTF(jni, name);
    jthread th = init && nm ? (*jni)->NewObject(jni, tc, init, nm) : NULL;
    if (!th) {
        (*jni)->ExceptionClear(jni);
        return -1;
    }
    return (*j)->RunAgentThread(j, th, fn, NULL, JVMTI_THREAD_NORM_PRIORITY) ? -1 : 0;
}

static void JNICALL on_vm_init(jvmtiEnv *j, JNIEnv *jni, jthread th) {
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
    for (int i = 0; i < wf_nwalkers; i++)
        if (wf_walkers[i]->vm_init) wf_walkers[i]->vm_init(j, jni);

    wf_budget_init();
    if (wf_fault_install() || (wf_nwalkers && wf_handler_install())) {
        fail("cannot install signal handlers");
        return;
    }
    if (wf_agent_thread(j, jni, "walkfuzz-service", service_main)) fail("cannot start the service thread");
    if (wf_safepoint_start(j, jni)) fail("cannot start the safepoint service thread");
    if (wf_nwalkers && wf_driver_start_sampler()) fail("cannot start the sampler thread");
    char name[WF_LOG_THREAD_NAME];
    wf_threads_register(jni, th, thread_name(jni, th, name, sizeof name));
    if (__atomic_load_n(&wf_hdr->agent_state, __ATOMIC_ACQUIRE) != WF_STATE_FAILED)
        __atomic_store_n(&wf_hdr->agent_state, WF_STATE_SAMPLING, __ATOMIC_RELEASE);
}

static void JNICALL on_vm_death(jvmtiEnv *j, JNIEnv *jni) {
    (void)j, (void)jni;
    wf_driver_stop();
    wf_threads_tick();
    wf_methods_close();
    if (__atomic_load_n(&wf_hdr->agent_state, __ATOMIC_ACQUIRE) != WF_STATE_FAILED)
        __atomic_store_n(&wf_hdr->agent_state, WF_STATE_EXITED, __ATOMIC_RELEASE);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
    (void)reserved;
    char err[256];
    const char *conf = options && !strncmp(options, "config=", 7) ? options + 7 : NULL;
    if (!conf) {
        fprintf(stderr, "walkfuzz agent: expected -agentpath:libwalkfuzz.so=config=PATH\n");
        return JNI_ERR;
    }
    if (wf_config_load(conf, &wf_cfg, err, sizeof err) || wf_log_map(wf_cfg.log_path, err, sizeof err)) {
        fprintf(stderr, "walkfuzz agent: %s\n", err);
        return JNI_ERR;
    }
    wf_hdr->agent_pid = getpid();
    wf_hdr->start_ns = wf_now_ns();
    wf_hdr->max_depth = (uint64_t)wf_cfg.depth;
    wf_hdr->interval_ns = wf_cfg.interval_ns;

    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
        fail("JVMTI 1.2 is not available");
        return JNI_ERR;
    }
    if (wf_cfg.bytecodes) {
        /* For the frame-validity oracle; an always-available capability in HotSpot that
         * changes nothing in how code is compiled or run. */
        jvmtiCapabilities caps;
        memset(&caps, 0, sizeof caps);
        caps.can_get_bytecodes = 1;
        wf_methods_bytecodes((*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE);
    }
    /* In the OnLoad phase only VM-defined properties exist: java.vm.version, not java.version. */
    char *v = NULL;
    if ((*jvmti)->GetSystemProperty(jvmti, "java.vm.version", &v) == JVMTI_ERROR_NONE && v) {
        snprintf(java_version, sizeof java_version, "%s", v);
        (*jvmti)->Deallocate(jvmti, (unsigned char *)v);
    }
    if (wf_methods_open(wf_cfg.methods_path)) {
        snprintf(err, sizeof err, "cannot write method table %.200s", wf_cfg.methods_path);
        fail(err);
        return JNI_ERR;
    }
    if (setup_walkers(vm, err, sizeof err)) {
        fail(err);
        return JNI_ERR;
    }

    write_codes();

    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.VMStart = on_vm_start;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.ClassLoad = on_class_load;
    cb.ClassPrepare = on_class_prepare;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    jvmtiEvent evs[] = {JVMTI_EVENT_VM_INIT,     JVMTI_EVENT_VM_DEATH,   JVMTI_EVENT_VM_START,
                        JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END, JVMTI_EVENT_CLASS_LOAD,
                        JVMTI_EVENT_CLASS_PREPARE};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, evs[i], NULL);
    (*jvmti)->CreateRawMonitor(jvmti, "walkfuzz-tick", &tick_monitor);
    __atomic_store_n(&wf_hdr->agent_state, WF_STATE_LOADED, __ATOMIC_RELEASE);
    return JNI_OK;
}
