/* The method table (methods.c): jmethodID -> class, name, signature, max bci, flags. */
#ifndef WF_METHODS_H
#define WF_METHODS_H

#include <jvmti.h>

int wf_methods_open(const char *path);
void wf_methods_class(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass);
void wf_methods_close(void);
void wf_methods_set_thread_class(JNIEnv *jni);
void wf_methods_bytecodes(int on);
/* The JVM granted can_get_constant_pool: each class gets a P line, its invokes' targets. */
void wf_methods_pool(int on);
/* The JVM granted can_tag_objects: each class written is tagged WF_METHODS_WRITTEN. */
#define WF_METHODS_WRITTEN 1
void wf_methods_tags(int on);
/* Service thread: write the loaded classes no event reported (every 250 ms, or now if force). */
void wf_methods_sweep(jvmtiEnv *jvmti, JNIEnv *jni, int force);
/* A class is being redefined or retransformed (ClassFileLoadHook): queue it... */
void wf_methods_redefined(JNIEnv *jni, jclass klass);
/* ...and list its methods again, with the new version's bytecode (service thread). */
void wf_methods_relist(jvmtiEnv *jvmti, JNIEnv *jni);

#endif
