import java.nio.file.Files;
import java.nio.file.Path;

import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * Writes jdk.StackTraceRequest events shaped as FACTS describes the proposed API's JFR
 * variant (userData, failed, biased, a stack trace), so the reader has a real recording
 * to parse while no JDK ships the event. gen.sh records it with the walker's own .jfc.
 */
public class Emit {
    @Name("jdk.StackTraceRequest")
    @Label("Stack Trace Request")
    @StackTrace(true)
    static class StackTraceRequest extends Event {
        @Label("User Data")
        long userData;

        @Label("Failed")
        boolean failed;

        @Label("Biased")
        boolean biased;
    }

    static void leaf(long userData, boolean failed, boolean biased) {
        StackTraceRequest e = new StackTraceRequest();
        e.userData = userData;
        e.failed = failed;
        e.biased = biased;
        e.commit();
    }

    static void mid(long userData) {
        leaf(userData, false, false);
    }

    public static void main(String[] args) {
        mid(77L << 32 | 9);
        leaf(77L << 32 | 10, false, true);
        leaf(78L << 32 | 3, true, false);
    }
}
