package dev.sluice.streams.state.internals;

import static dev.sluice.streams.state.internals.StoreFixture.bytes;
import static dev.sluice.streams.state.internals.StoreFixture.string;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Applies the same random puts to Kafka Streams' RocksDB window store and to Sluice's, and compares
 * every read element by element, in order: keys that prefix each other and expiring windows are where
 * the layouts would part ways.
 */
class WindowStoreDifferentialTest {

    private static final Duration RETENTION = Duration.ofMinutes(3);
    private static final Duration WINDOW_SIZE = Duration.ofSeconds(10);
    private static final String[] KEYS = {"a", "aa", "ab", "b", "ba", "c", "\u00ff"};

    @TempDir
    Path kafkaStreamsDir;

    @TempDir
    Path sluiceDir;

    private int nonEmptyReads;

    static Stream<Arguments> cases() {
        final List<Arguments> cases = new ArrayList<>();
        for (final boolean retainDuplicates : new boolean[] {false, true}) {
            for (final long seed : new long[] {1, 2, 3}) {
                cases.add(Arguments.of("rocksdb", retainDuplicates, seed));
                cases.add(Arguments.of("in-memory", retainDuplicates, seed));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} retainDuplicates={1} seed={2}")
    @MethodSource("cases")
    void everyReadMatchesKafkaStreamsRocksDbWindowStore(final String backend, final boolean retainDuplicates,
                                                        final long seed) {
        final WindowBytesStoreSupplier sluiceSupplier = backend.equals("rocksdb")
            ? SluiceWindowBytesStoreSupplier.persistent("w", RETENTION, WINDOW_SIZE, retainDuplicates, false)
            : SluiceWindowBytesStoreSupplier.inMemory("w", RETENTION, WINDOW_SIZE, retainDuplicates);
        final WindowBytesStoreSupplier kafkaSupplier =
            Stores.persistentWindowStore("w", RETENTION, WINDOW_SIZE, retainDuplicates);
        final Random random = new Random(seed);
        final WindowStore<Bytes, byte[]> expected = new StoreFixture(kafkaStreamsDir).init(kafkaSupplier.get());
        try (SluiceWindowBytesStore actual = (SluiceWindowBytesStore) new StoreFixture(sluiceDir).init(sluiceSupplier.get())) {
            long streamTime = 0;
            for (int step = 0; step < 400; step++) {
                streamTime += random.nextInt(4_000);
                final long windowStart = Math.max(0, streamTime - random.nextInt(240_000)) / 1_000 * 1_000;
                final Bytes key = bytes(KEYS[random.nextInt(KEYS.length)]);
                final byte[] value = random.nextInt(8) == 0 ? null : StoreFixture.value("v" + step);
                expected.put(key, value, windowStart);
                actual.put(key, value, windowStart);
                if (step % 20 == 19) {
                    compareReads(expected, actual, random, streamTime);
                }
            }
        } finally {
            expected.close();
        }
        assertTrue(nonEmptyReads > 50, "the reads compared found windows: " + nonEmptyReads);
    }

    private void compareReads(final WindowStore<Bytes, byte[]> expected, final WindowStore<Bytes, byte[]> actual,
                                     final Random random, final long streamTime) {
        for (int read = 0; read < 10; read++) {
            final Bytes key = bytes(KEYS[random.nextInt(KEYS.length)]);
            final long timeFrom = streamTime - random.nextInt(300_000);
            final long timeTo = timeFrom + random.nextInt(200_000);
            final Bytes keyFrom = random.nextInt(5) == 0 ? null : bytes(KEYS[random.nextInt(KEYS.length)]);
            final Bytes keyTo = random.nextInt(5) == 0 ? null : bytes(KEYS[random.nextInt(KEYS.length)]);
            final long exactStart = Math.max(0, timeFrom) / 1_000 * 1_000;
            final String what = " key=" + string(key.get()) + " keys=" + keyFrom + ".." + keyTo
                + " time=" + timeFrom + ".." + timeTo;
            assertEquals(string(expected.fetch(key, exactStart)), string(actual.fetch(key, exactStart)), "fetch" + what);
            compare(single(expected.fetch(key, timeFrom, timeTo)), single(actual.fetch(key, timeFrom, timeTo)),
                "fetch(key, from, to)" + what);
            compare(single(expected.backwardFetch(key, timeFrom, timeTo)),
                single(actual.backwardFetch(key, timeFrom, timeTo)), "backwardFetch(key, from, to)" + what);
            compare(windowed(expected.fetch(keyFrom, keyTo, timeFrom, timeTo)),
                windowed(actual.fetch(keyFrom, keyTo, timeFrom, timeTo)), "fetch(keyFrom, keyTo, from, to)" + what);
            compare(windowed(expected.backwardFetch(keyFrom, keyTo, timeFrom, timeTo)),
                windowed(actual.backwardFetch(keyFrom, keyTo, timeFrom, timeTo)), "backwardFetch(range)" + what);
            compare(windowed(expected.fetchAll(timeFrom, timeTo)), windowed(actual.fetchAll(timeFrom, timeTo)),
                "fetchAll" + what);
            compare(windowed(expected.backwardFetchAll(timeFrom, timeTo)),
                windowed(actual.backwardFetchAll(timeFrom, timeTo)), "backwardFetchAll" + what);
        }
        compare(windowed(expected.all()), windowed(actual.all()), "all");
        compare(windowed(expected.backwardAll()), windowed(actual.backwardAll()), "backwardAll");
    }

    private void compare(final List<String> expected, final List<String> actual, final String what) {
        assertEquals(expected, actual, what);
        if (!expected.isEmpty()) {
            nonEmptyReads++;
        }
    }

    static List<String> single(final WindowStoreIterator<byte[]> iterator) {
        return drain(iterator, start -> Long.toString(start));
    }

    static List<String> windowed(final KeyValueIterator<Windowed<Bytes>, byte[]> iterator) {
        return drain(iterator, key -> string(key.key().get()) + "@" + key.window().start() + ".." + key.window().end());
    }

    private static <K> List<String> drain(final KeyValueIterator<K, byte[]> iterator, final Function<K, String> describe) {
        final List<String> entries = new ArrayList<>();
        try (iterator) {
            while (iterator.hasNext()) {
                final KeyValue<K, byte[]> entry = iterator.next();
                entries.add(describe.apply(entry.key) + "=" + string(entry.value));
            }
        }
        return entries;
    }
}
