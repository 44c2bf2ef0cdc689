package dev.sluice.streams.internals;

/**
 * Native calls that check the library itself rather than do work: what version it is, and that a
 * panic inside Rust reaches Java as an exception instead of aborting the JVM.
 */
public final class NativeChecks {

    private NativeChecks() {
    }

    /** The version of the loaded native library, without a {@code -SNAPSHOT} qualifier. */
    public static native String version();

    /**
     * Panics inside Rust with {@code message}. The panic must arrive as a
     * {@link org.apache.kafka.streams.errors.StreamsException} carrying the message.
     */
    public static native void panicWith(String message);
}
