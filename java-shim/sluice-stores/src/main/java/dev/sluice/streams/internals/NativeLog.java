package dev.sluice.streams.internals;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the native library's log records go: slf4j, as Kafka Streams' own. The engine logs under
 * {@value #ROOT}{@code .<module>} (for example {@code dev.sluice.core.engine.commit}), and
 * librdkafka, the engine's Kafka client, under {@code dev.sluice.core.librdkafka}.
 *
 * <p>A record finer than what {@value #ROOT} logs is dropped inside the library, before it is
 * formatted or crosses into Java; the level is read once, when the library is loaded.
 */
public final class NativeLog {

    /** The logger every native logger's name starts with. */
    public static final String ROOT = "dev.sluice.core";

    // The native library's numbering of levels (Rust's `log::Level`).
    private static final int OFF = 0;
    private static final int ERROR = 1;
    private static final int WARN = 2;
    private static final int INFO = 3;
    private static final int DEBUG = 4;
    private static final int TRACE = 5;

    private NativeLog() {
    }

    /** Hands the library's records to slf4j from now on. */
    static void install() {
        installNative(maxLevel(LoggerFactory.getLogger(ROOT)));
    }

    private static int maxLevel(final Logger root) {
        if (root.isTraceEnabled()) {
            return TRACE;
        }
        if (root.isDebugEnabled()) {
            return DEBUG;
        }
        if (root.isInfoEnabled()) {
            return INFO;
        }
        if (root.isWarnEnabled()) {
            return WARN;
        }
        return root.isErrorEnabled() ? ERROR : OFF;
    }

    /** Called by the library, on whichever thread logged. */
    static void log(final int level, final String logger, final String message) {
        final Logger target = LoggerFactory.getLogger(logger);
        switch (level) {
            case ERROR -> target.error(message);
            case WARN -> target.warn(message);
            case INFO -> target.info(message);
            case DEBUG -> target.debug(message);
            default -> target.trace(message);
        }
    }

    private static native void installNative(int maxLevel);
}
