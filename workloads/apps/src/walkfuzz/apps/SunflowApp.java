package walkfuzz.apps;

import java.lang.reflect.Field;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.sunflow.PluginRegistry;
import org.sunflow.SunflowAPI;
import org.sunflow.core.Display;
import org.sunflow.core.IntersectionState;
import org.sunflow.core.Options;
import org.sunflow.core.Scene;
import org.sunflow.core.renderer.SimpleRenderer;
import org.sunflow.image.Color;
import org.sunflow.math.Matrix4;
import org.sunflow.math.Point3;
import org.sunflow.math.Vector3;
import org.sunflow.system.UI;
import org.sunflow.system.ui.SilentInterface;

/**
 * Sunflow 0.07 ray tracer: each operation builds a seeded scene through SunflowAPI (spheres,
 * boxes, tori, tessellated Bézier teapots, random triangle meshes, a floor plane; diffuse,
 * Phong, shiny, mirror, glass and ambient-occlusion shaders; point lights), builds its
 * acceleration structure and ray-traces it one sample per pixel. Sunflow's own renderers
 * trace on threads they start themselves (named Thread-N, so not wf-*); this app registers
 * an image sampler, {@code wf-inline}, that runs Sunflow's SimpleRenderer bucket loop on the
 * calling wf-sunflow-N thread instead.
 */
final class SunflowApp extends App {
    static final String SAMPLER = "wf-inline";
    static final float[] SENTINEL = {0.25f, 0.5f, 0.75f};

    private final AtomicLong images = new AtomicLong(), pixels = new AtomicLong(), wrong = new AtomicLong();
    private final AtomicReference<String> firstWrong = new AtomicReference<>();

    @Override
    Map<String, long[]> keys() {
        return Map.of(
                "objects", new long[] {12, 1, 10_000},
                "size", new long[] {96, 16, 4096});
    }

    /** The run in progress: the renderer stops between buckets at its deadline. */
    static volatile Run current;

    @Override
    void setup(Run run) {
        current = run;
        UI.set(new SilentInterface());
        PluginRegistry.imageSamplerPlugins.registerPlugin(SAMPLER, InlineRenderer.class);
    }

    /** SimpleRenderer's buckets, rendered in order on the calling thread. */
    public static final class InlineRenderer extends SimpleRenderer {
        private static final Field DISPLAY;

        static {
            try {
                DISPLAY = SimpleRenderer.class.getDeclaredField("display");
                DISPLAY.setAccessible(true);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private int w, h;

        @Override
        public boolean prepare(Options options, Scene scene, int w, int h) {
            this.w = w;
            this.h = h;
            return super.prepare(options, scene, w, h);
        }

        @Override
        public void render(Display display) {
            try {
                DISPLAY.set(this, display);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
            display.imageBegin(w, h, 32);
            IntersectionState istate = new IntersectionState();
            Run run = current;
            for (int by = 0; by < (h + 31) / 32; by++) {
                for (int bx = 0; bx < (w + 31) / 32; bx++) {
                    if (run != null && !run.running()) return; // the deadline: leave the image unfinished
                    renderBucket(bx, by, istate);
                }
            }
            display.imageEnd();
        }
    }

    /** Keeps the image in memory. */
    static final class Capture implements Display {
        int w, h, updated;
        float[] rgb;

        @Override
        public void imageBegin(int w, int h, int bucketSize) {
            this.w = w;
            this.h = h;
            rgb = new float[w * h * 3];
        }

        @Override
        public void imagePrepare(int x, int y, int w, int h, int id) {}

        @Override
        public void imageUpdate(int x, int y, int bw, int bh, Color[] data, float[] alpha) {
            for (int j = 0; j < bh; j++) {
                for (int i = 0; i < bw; i++) {
                    Color c = data[j * bw + i];
                    int o = ((y + j) * w + x + i) * 3;
                    float[] v = c.getRGB();
                    rgb[o] = v[0];
                    rgb[o + 1] = v[1];
                    rgb[o + 2] = v[2];
                    updated++;
                }
            }
        }

        @Override
        public void imageFill(int x, int y, int w, int h, Color c, float alpha) {}

        @Override
        public void imageEnd() {}
    }

    static float f(SplittableRandom r, double lo, double hi) {
        return (float) (lo + (hi - lo) * r.nextDouble());
    }

    static void color(SunflowAPI api, String name, SplittableRandom r) {
        api.parameter(name, "sRGB linear", f(r, 0.1, 0.9), f(r, 0.1, 0.9), f(r, 0.1, 0.9));
    }

    static SunflowAPI scene(SplittableRandom r, int w, int h, int objects) {
        SunflowAPI api = new SunflowAPI();
        Point3 eye = new Point3(0, 2, 10), target = new Point3(0, 1, 0);
        api.parameter("transform", Matrix4.lookAt(eye, target, new Vector3(0, 1, 0)));
        api.parameter("fov", 45f);
        api.parameter("aspect", (float) w / h);
        api.camera("cam", "pinhole");
        String[] shaders = {"diffuse", "phong", "shiny_diffuse", "mirror", "glass", "ambient_occlusion"};
        for (int i = 0; i < shaders.length; i++) {
            switch (shaders[i]) {
                case "diffuse": color(api, "diffuse", r); break;
                case "phong":
                    color(api, "diffuse", r);
                    color(api, "specular", r);
                    api.parameter("power", f(r, 10, 100));
                    api.parameter("samples", 1);
                    break;
                case "shiny_diffuse":
                    color(api, "diffuse", r);
                    api.parameter("shiny", f(r, 0.1, 0.6));
                    break;
                case "mirror": color(api, "color", r); break;
                case "glass":
                    api.parameter("eta", f(r, 1.2, 1.7));
                    color(api, "color", r);
                    break;
                default:
                    color(api, "bright", r);
                    api.parameter("dark", "sRGB linear", 0f, 0f, 0f);
                    api.parameter("samples", 4 + r.nextInt(12));
                    api.parameter("maxdist", f(r, 1, 4));
            }
            api.shader("s" + i, shaders[i]);
        }
        // The sentinel: a constant-coloured sphere on the line of sight through the image centre,
        // nearer than anything else, so the centre pixel has exactly its colour.
        api.parameter("color", "sRGB linear", SENTINEL);
        api.shader("sentinel", "constant");
        api.geometry("sentinel.geo", "sphere"); // each API call consumes the parameters set before it
        api.parameter("shaders", "sentinel");
        float t = 1.5f / (float) Math.sqrt(1 + 100);
        api.parameter("transform", Matrix4.translation(eye.x + t * (target.x - eye.x), eye.y + t * (target.y - eye.y),
                eye.z + t * (target.z - eye.z)).multiply(Matrix4.scale(0.15f)));
        api.instance("sentinel.inst", "sentinel.geo");
        // The floor.
        api.parameter("center", new Point3(0, -0.5f, 0));
        api.parameter("normal", new Vector3(0, 1, 0));
        api.geometry("floor", "plane");
        api.parameter("shaders", "s0");
        api.instance("floor.inst", "floor");
        String[] kinds = {"sphere", "box", "torus", "sphere", "mesh", "teapot"};
        for (int i = 0; i < objects; i++) {
            String kind = kinds[r.nextInt(i == 0 ? 5 : kinds.length)];
            String geo = "g" + i;
            if (kind.equals("mesh")) {
                int n = 8 + r.nextInt(24);
                float[] pts = new float[n * 3];
                for (int k = 0; k < pts.length; k++) pts[k] = f(r, -1, 1);
                int[] tris = new int[(n - 2) * 3];
                for (int k = 0; k < n - 2; k++) {
                    tris[3 * k] = 0;
                    tris[3 * k + 1] = k + 1;
                    tris[3 * k + 2] = k + 2;
                }
                api.parameter("points", "point", "vertex", pts);
                api.parameter("triangles", tris);
                api.geometry(geo, "triangle_mesh");
            } else if (kind.equals("torus")) {
                api.parameter("radiusInner", f(r, 0.1, 0.3));
                api.parameter("radiusOuter", f(r, 0.5, 1));
                api.geometry(geo, "torus");
            } else if (kind.equals("teapot")) {
                api.parameter("subdivs", 2 + r.nextInt(3));
                api.parameter("smooth", true);
                api.geometry(geo, kind);
            } else {
                api.geometry(geo, kind);
            }
            api.parameter("shaders", "s" + r.nextInt(shaders.length));
            float scale = kind.equals("teapot") ? f(r, 0.003, 0.008) : f(r, 0.3, 1.0); // the teapot is 260 units wide
            Matrix4 m = Matrix4.translation(f(r, -4, 4), f(r, 0, 3), f(r, -4, 3))
                    .multiply(Matrix4.rotateY(f(r, 0, 6.28))).multiply(Matrix4.rotateX(f(r, -0.5, 0.5))).multiply(Matrix4.scale(scale));
            api.parameter("transform", m);
            api.instance(geo + ".inst", geo);
        }
        for (int i = 0, n = 1 + r.nextInt(3); i < n; i++) {
            api.parameter("center", new Point3(f(r, -6, 6), f(r, 4, 9), f(r, -2, 8)));
            api.parameter("power", "sRGB linear", f(r, 50, 200), f(r, 50, 200), f(r, 50, 200));
            api.light("light" + i, "point");
        }
        api.parameter("camera", "cam");
        api.parameter("resolutionX", w);
        api.parameter("resolutionY", h);
        api.parameter("sampler", SAMPLER);
        api.parameter("accel", r.nextBoolean() ? "kdtree" : "bih");
        api.options(SunflowAPI.DEFAULT_OPTIONS);
        return api;
    }

    @Override
    void work(Run run, int worker, SplittableRandom rnd) {
        int objects = run.cfg.getInt("objects"), size = run.cfg.getInt("size");
        while (run.running()) {
            int w = Math.max(16, size + rnd.nextInt(size / 2 + 1)) & ~1, h = Math.max(16, size * 3 / 4 + rnd.nextInt(size / 2 + 1)) & ~1;
            SunflowAPI api = scene(rnd, w, h, objects);
            Capture c = new Capture();
            api.render(SunflowAPI.DEFAULT_OPTIONS, c);
            if (!run.running()) break; // cut short at the deadline: not a finished image
            String bad = null;
            if (c.rgb == null || c.updated != w * h) {
                bad = "pixels written " + c.updated + " != " + w * h;
            } else {
                // The centre of the image is between pixels: look at the four around it.
                int cx = w / 2, cy = h / 2;
                boolean hit = false;
                for (int dy = -1; dy <= 0 && !hit; dy++) {
                    for (int dx = -1; dx <= 0 && !hit; dx++) {
                        int o = ((cy + dy) * w + cx + dx) * 3;
                        hit = Math.abs(c.rgb[o] - SENTINEL[0]) < 1e-3 && Math.abs(c.rgb[o + 1] - SENTINEL[1]) < 1e-3
                                && Math.abs(c.rgb[o + 2] - SENTINEL[2]) < 1e-3;
                    }
                }
                if (!hit) {
                    int o = (cy * w + cx) * 3;
                    bad = String.format(java.util.Locale.ROOT, "centre pixel (%.3f,%.3f,%.3f) is not the sentinel colour", c.rgb[o], c.rgb[o + 1], c.rgb[o + 2]);
                }
            }
            if (bad != null) {
                wrong.incrementAndGet();
                firstWrong.compareAndSet(null, bad);
            }
            images.incrementAndGet();
            pixels.addAndGet((long) w * h);
            run.op();
        }
    }

    @Override
    void finish(Run run) {
        run.check("rendered", images.get() > 0 && wrong.get() == 0, images + " scenes ray-traced, " + pixels + " pixels"
                + (wrong.get() > 0 ? "; " + wrong + " wrong, first: " + firstWrong.get() : ", sentinel colour at every centre"));
    }
}
