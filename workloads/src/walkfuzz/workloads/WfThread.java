package walkfuzz.workloads;

/**
 * A platform thread whose bottom Java frame is its own run() override, the same on every JDK
 * (JDK 21+ inserts Thread.runWith between Thread.run and a Runnable's run, hidden from
 * StackWalker but not from async walkers), so exact depths counted by StackWalker are the depths
 * a walker sees. Large stacks leave room for 2049+ interpreted frames.
 */
final class WfThread extends Thread {
    static final long STACK_BYTES = 16L << 20;
    private final Runnable task;

    WfThread(String name, Runnable task) {
        super(null, null, name, STACK_BYTES);
        this.task = task;
        setDaemon(true);
    }

    @Override
    public void run() {
        task.run();
    }
}
