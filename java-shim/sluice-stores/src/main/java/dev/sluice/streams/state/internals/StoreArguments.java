package dev.sluice.streams.state.internals;

import java.time.Duration;
import java.util.Objects;
import org.apache.kafka.streams.internals.ApiUtils;
import org.apache.kafka.streams.state.Stores;

/**
 * The argument checks of {@link Stores}' factories, with the same exceptions and messages, and the numbers
 * Kafka Streams derives from the arguments. Sluice's suppliers check their arguments here rather than by
 * calling {@link Stores}: in Sluice's drop-in artifact {@link Stores} is Sluice's own and calls them.
 */
public final class StoreArguments {

    /** Retention, window size and segment interval of a window store, in milliseconds. */
    public record Window(long retentionPeriod, long windowSize, long segmentInterval) {
    }

    private StoreArguments() {
    }

    public static String name(final String name) {
        return Objects.requireNonNull(name, "name cannot be null");
    }

    /** Retention of a window or session store; a store's name must be given too. */
    public static long retentionPeriod(final String name, final Duration retentionPeriod) {
        name(name);
        return notNegative(millis(retentionPeriod, "retentionPeriod"), "retentionPeriod");
    }

    public static Window window(final String name, final Duration retentionPeriod, final Duration windowSize) {
        final long retention = retentionPeriod(name, retentionPeriod);
        final long size = notNegative(millis(windowSize, "windowSize"), "windowSize");
        if (size > retention) {
            throw new IllegalArgumentException("The retention period of the window store " + name
                + " must be no smaller than its window size. Got size=[" + windowSize + "], retention=["
                + retentionPeriod + "]");
        }
        return new Window(retention, size, segmentInterval(retention));
    }

    /** Kafka Streams' segment interval for a persistent window or session store of this retention. */
    public static long segmentInterval(final long retentionPeriod) {
        return Math.max(retentionPeriod / 2, 60_000L);
    }

    public static long historyRetention(final String name, final Duration historyRetention) {
        name(name);
        return notNegative(millis(historyRetention, "historyRetention"), "historyRetention");
    }

    public static long versionedSegmentInterval(final Duration segmentInterval) {
        final long interval = millis(segmentInterval, "segmentInterval");
        if (interval <= 0) {
            throw new IllegalArgumentException("segmentInterval cannot be zero or negative");
        }
        return interval;
    }

    public static int maxCacheSize(final String name, final int maxCacheSize) {
        name(name);
        if (maxCacheSize < 0) {
            throw new IllegalArgumentException("maxCacheSize cannot be negative");
        }
        return maxCacheSize;
    }

    private static long millis(final Duration duration, final String argument) {
        return ApiUtils.validateMillisecondDuration(duration, ApiUtils.prepareMillisCheckFailMsgPrefix(duration, argument));
    }

    private static long notNegative(final long millis, final String argument) {
        if (millis < 0) {
            throw new IllegalArgumentException(argument + " cannot be negative");
        }
        return millis;
    }
}
