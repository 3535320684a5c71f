package walkfuzz.workloads;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A throwaway class loader that defines its own copy of one nested class of this jar (and of
 * the classes nested in it) from the jar's bytes; everything else comes from the parent.
 *
 * <p>Each copy is a new class with new methods: new invocation counters, empty type profiles,
 * no compiled code and no dependencies. That is how workloads repeat things the JVM does only
 * once per method: OSR migration, CHA invalidation, profile-driven deoptimization, call-site
 * linkage and reflection inflation. Dropping the loader lets the copy and its compiled code be
 * unloaded (jmethodID and class-unloading races).
 *
 * <p>A copy lives in a different runtime package from the rest of walkfuzz.workloads, so the
 * template must be public with a public constructor, implement a public (JDK) interface, and
 * must not touch private or package-private members of classes outside itself.
 */
final class FreshLoader extends ClassLoader {
    private static final Map<String, byte[]> BYTES = new ConcurrentHashMap<>();
    private final String prefix;

    static {
        registerAsParallelCapable();
    }

    private FreshLoader(Class<?> template) {
        super("walkfuzz-fresh", ClassLoader.getSystemClassLoader());
        this.prefix = template.getName();
    }

    /** A fresh copy of {@code template}, initialized, in a loader of its own. */
    static Class<?> copy(Class<?> template) throws ClassNotFoundException {
        return Class.forName(template.getName(), true, new FreshLoader(template));
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!name.equals(prefix) && !name.startsWith(prefix + "$")) return super.loadClass(name, resolve);
        synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            if (c == null) {
                byte[] b = BYTES.computeIfAbsent(name, FreshLoader::read);
                c = defineClass(name, b, 0, b.length);
            }
            if (resolve) resolveClass(c);
            return c;
        }
    }

    private static byte[] read(String name) {
        String path = name.replace('.', '/') + ".class";
        try (InputStream in = ClassLoader.getSystemResourceAsStream(path)) {
            if (in == null) throw new IllegalStateException("class bytes not found: " + path);
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
