package org.apache.kafka.streams.state.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.state.internals.NativeHandles;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Applies the same random operations to Kafka Streams' {@link ThreadCache} and to {@link SluiceThreadCache}
 * and compares everything a caching store or an operator can see after each: what reads and iterators
 * return (values and record contexts), what flushes and evictions hand to the listeners and in which
 * order, sizes, counters, exceptions and the cache metrics.
 */
class SluiceThreadCacheDifferentialTest {

    private static final String[] NAMESPACES = {"0_0-counts", "1_2-totals"};
    private static final String[] KEYS = {"a", "aa", "ab", "b", "ba", "c", "cc", "d", "e", "\u00ff"};
    private static final String[] TOPICS = {"words", "lines", null};

    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6})
    void everyObservableOutcomeMatchesKafkaStreamsThreadCache(final long seed) {
        final Random random = new Random(seed);
        final long maxBytes = 600 + random.nextInt(1200);
        final Side expected = new Side(metrics -> new ThreadCache(new LogContext(), maxBytes, metrics));
        final Side actual = new Side(metrics -> new SluiceThreadCache(new LogContext(), maxBytes, metrics));
        try {
            for (final String namespace : NAMESPACES) {
                expected.listenTo(namespace);
                actual.listenTo(namespace);
            }
            for (int step = 0; step < 3_000; step++) {
                final String namespace = NAMESPACES[random.nextInt(NAMESPACES.length)];
                final Bytes key = key(random);
                final int operation = random.nextInt(100);
                final String outcome;
                if (operation < 40) {
                    final Supplier<LRUCacheEntry> entry = entry(random, step);
                    outcome = both(expected, actual, cache -> {
                        cache.put(namespace, key, entry.get());
                        return "put";
                    });
                } else if (operation < 50) {
                    final byte[] value = value(random, step);
                    outcome = both(expected, actual, cache -> {
                        cache.put(namespace, key, new LRUCacheEntry(value));
                        return "clean put";
                    });
                } else if (operation < 70) {
                    outcome = both(expected, actual, cache -> describe(cache.get(namespace, key)));
                } else if (operation < 74) {
                    final Supplier<LRUCacheEntry> entry = entry(random, step);
                    outcome = both(expected, actual, cache -> describe(cache.putIfAbsent(namespace, key, entry.get())));
                } else if (operation < 78) {
                    outcome = both(expected, actual, cache -> describe(cache.delete(namespace, key)));
                } else if (operation < 84) {
                    outcome = both(expected, actual, cache -> {
                        cache.flush(namespace);
                        return "flush";
                    });
                } else if (operation < 94) {
                    final Bytes to = key(random);
                    final int kind = random.nextInt(6);
                    outcome = both(expected, actual, cache -> describe(switch (kind) {
                        case 0 -> cache.range(namespace, key, to);
                        case 1 -> cache.range(namespace, key, to, false);
                        case 2 -> cache.reverseRange(namespace, key, to);
                        case 3 -> cache.all(namespace);
                        case 4 -> cache.reverseAll(namespace);
                        default -> cache.range(namespace, null, to);
                    }));
                } else if (operation < 97) {
                    final long newSize = maxBytes / 2 + random.nextInt((int) maxBytes);
                    outcome = both(expected, actual, cache -> {
                        cache.resize(newSize);
                        return "resize";
                    });
                } else if (operation < 99) {
                    outcome = both(expected, actual, cache -> {
                        cache.clear(namespace);
                        return "clear";
                    });
                } else {
                    outcome = both(expected, actual, cache -> {
                        cache.close(namespace);
                        return "close";
                    });
                    expected.listenTo(namespace);
                    actual.listenTo(namespace);
                }
                final int at = step;
                assertEquals(expected.flushed, actual.flushed, () -> "flushed after step " + at + ": " + outcome + "\n"
                    + firstDifference(expected.flushed, actual.flushed));
                assertEquals(expected.state(), actual.state(), "after step " + step + ": " + outcome);
            }
            assertTrue(expected.flushed.size() > 100, "the operations flushed and evicted: " + expected.flushed.size());
        } finally {
            ((SluiceThreadCache) actual.cache).close();
        }
    }

    @Test
    void aClosedCacheRefusesCallsAndReleasesItsNativeMemory() {
        final long before = NativeHandles.liveRecordCaches();
        final SluiceThreadCache cache = new SluiceThreadCache(new LogContext(), 1_000, streamsMetrics(new Metrics()));
        cache.addDirtyEntryFlushListener(NAMESPACES[0], entries -> { });
        cache.put(NAMESPACES[0], Bytes.wrap(new byte[] {1}), new LRUCacheEntry(new byte[] {2}));
        assertEquals(before + 1, NativeHandles.liveRecordCaches());
        cache.close();
        cache.close();
        assertEquals(before, NativeHandles.liveRecordCaches());
        assertThrows(InvalidStateStoreException.class, () -> cache.put(NAMESPACES[1], Bytes.wrap(new byte[] {1}),
            new LRUCacheEntry(new byte[] {2})));
    }

    /** One cache with its listeners' log and its metrics. */
    private static final class Side {
        final Metrics metrics = new Metrics(new MetricConfig().recordLevel(Sensor.RecordingLevel.DEBUG));
        final ThreadCache cache;
        final List<String> flushed = new ArrayList<>();

        Side(final Function<StreamsMetricsImpl, ThreadCache> create) {
            cache = create.apply(streamsMetrics(metrics));
        }

        void listenTo(final String namespace) {
            cache.addDirtyEntryFlushListener(namespace, entries -> {
                for (final ThreadCache.DirtyEntry entry : entries) {
                    flushed.add(namespace + " " + entry.key() + " " + Arrays.toString(entry.newValue()) + " "
                        + describe(entry.entry()));
                }
                flushed.add("--");
            });
        }

        String state() {
            final Map<String, Object> cacheMetrics = new TreeMap<>();
            metrics.metrics().forEach((name, metric) -> {
                if (name.group().equals("stream-record-cache-metrics") || name.name().startsWith("cache-size")) {
                    cacheMetrics.put(name.group() + " " + name.name() + " " + new TreeMap<>(name.tags()),
                        metric.metricValue());
                }
            });
            return "sizeBytes " + cache.sizeBytes() + " size " + cache.size() + " puts "
                + cache.puts() + " gets " + cache.gets() + " evicts " + cache.evicts() + " flushes "
                + cache.flushes() + " metrics " + cacheMetrics;
        }
    }

    /** Where two listener logs part, so that a failure names the flushed entry that differs. */
    private static String firstDifference(final List<String> expected, final List<String> actual) {
        for (int i = 0; i < Math.min(expected.size(), actual.size()); i++) {
            if (!expected.get(i).equals(actual.get(i))) {
                return "first at " + i + ":\n" + expected.get(i) + "\nbut:\n" + actual.get(i);
            }
        }
        final int common = Math.min(expected.size(), actual.size());
        return "after " + common + " equal, expected more: " + expected.subList(common, expected.size())
            + "\nactual more: " + actual.subList(common, actual.size());
    }

    private static StreamsMetricsImpl streamsMetrics(final Metrics metrics) {
        return new StreamsMetricsImpl(metrics, "client", Time.SYSTEM);
    }

    /** Runs {@code operation} on both caches; the outcome, an exception's type included, must be the same. */
    private static String both(final Side expected, final Side actual, final Function<ThreadCache, String> operation) {
        final String expectedOutcome = outcome(expected.cache, operation);
        assertEquals(expectedOutcome, outcome(actual.cache, operation));
        return expectedOutcome;
    }

    private static String outcome(final ThreadCache cache, final Function<ThreadCache, String> operation) {
        try {
            return operation.apply(cache);
        } catch (final IllegalStateException | IllegalArgumentException e) {
            return e.getClass().getSimpleName();
        }
    }

    private static Bytes key(final Random random) {
        return Bytes.wrap(KEYS[random.nextInt(KEYS.length)].getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] value(final Random random, final int step) {
        return ("value-" + step + "-".repeat(random.nextInt(40))).getBytes(StandardCharsets.UTF_8);
    }

    /** A random dirty entry, made anew for each cache: Kafka Streams' cache marks the entry it holds clean. */
    private static Supplier<LRUCacheEntry> entry(final Random random, final int step) {
        final RecordHeaders headers = new RecordHeaders();
        if (random.nextInt(4) == 0) {
            headers.add("h" + random.nextInt(3), random.nextBoolean() ? null : new byte[] {(byte) step});
            headers.add("h", new byte[] {1, 2});
        }
        final byte[] rawKey = random.nextInt(3) == 0 ? null : new byte[] {(byte) random.nextInt(9)};
        final byte[] rawValue = random.nextInt(3) == 0 ? null : new byte[random.nextInt(20)];
        final byte[] value = random.nextInt(6) == 0 ? null : value(random, step);
        final int partition = random.nextInt(4);
        final String topic = TOPICS[random.nextInt(TOPICS.length)];
        return () -> new LRUCacheEntry(value, headers, true, step, 1_000L + step, partition, topic, rawKey, rawValue);
    }

    private static String describe(final LRUCacheEntry entry) {
        if (entry == null) {
            return "null";
        }
        final ProcessorRecordContext context = entry.context();
        final StringBuilder headers = new StringBuilder();
        for (final Header header : context.headers()) {
            headers.append(header.key()).append('=').append(Arrays.toString(header.value())).append(';');
        }
        return Arrays.toString(entry.value()) + " dirty=" + entry.isDirty() + " size=" + entry.size() + " offset="
            + context.offset() + " ts=" + context.timestamp() + " p=" + context.partition() + " topic="
            + context.topic() + " headers=" + headers + " rawKey=" + Arrays.toString(context.sourceRawKey())
            + " rawValue=" + Arrays.toString(context.sourceRawValue());
    }

    private static String describe(final ThreadCache.MemoryLRUCacheBytesIterator iterator) {
        final StringBuilder described = new StringBuilder();
        while (iterator.hasNext()) {
            described.append(iterator.peekNextKey()).append(" -> ").append(describe(iterator.next().value))
                .append('\n');
        }
        iterator.close();
        return described.toString();
    }
}
