package dev.sluice.streams.state.internals;

import static dev.sluice.streams.state.internals.StoreFixture.bytes;
import static dev.sluice.streams.state.internals.StoreFixture.string;
import static dev.sluice.streams.state.internals.WindowStoreDifferentialTest.windowed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Applies the same random puts and removes to Kafka Streams' RocksDB session store and to Sluice's, and
 * compares every read element by element, in order.
 */
class SessionStoreDifferentialTest {

    private static final Duration RETENTION = Duration.ofMinutes(3);
    private static final String[] KEYS = {"a", "aa", "ab", "b", "ba", "c", "\u00ff"};

    @TempDir
    Path kafkaStreamsDir;

    @TempDir
    Path sluiceDir;

    private int nonEmptyReads;

    static Stream<Arguments> cases() {
        final List<Arguments> cases = new ArrayList<>();
        for (final long seed : new long[] {1, 2, 3}) {
            cases.add(Arguments.of("rocksdb", seed));
            cases.add(Arguments.of("in-memory", seed));
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} seed={1}")
    @MethodSource("cases")
    void everyReadMatchesKafkaStreamsRocksDbSessionStore(final String backend, final long seed) {
        final SessionBytesStoreSupplier sluiceSupplier = backend.equals("rocksdb")
            ? SluiceSessionBytesStoreSupplier.persistent("s", RETENTION)
            : SluiceSessionBytesStoreSupplier.inMemory("s", RETENTION);
        final Random random = new Random(seed);
        final List<Windowed<Bytes>> written = new ArrayList<>();
        final SessionStore<Bytes, byte[]> expected =
            new StoreFixture(kafkaStreamsDir).init(Stores.persistentSessionStore("s", RETENTION).get());
        try (SluiceSessionBytesStore actual = (SluiceSessionBytesStore) new StoreFixture(sluiceDir).init(sluiceSupplier.get())) {
            long streamTime = 0;
            for (int step = 0; step < 400; step++) {
                streamTime += random.nextInt(4_000);
                if (!written.isEmpty() && random.nextInt(6) == 0) {
                    final Windowed<Bytes> session = written.get(random.nextInt(written.size()));
                    expected.remove(session);
                    actual.remove(session);
                    continue;
                }
                final long end = Math.max(0, streamTime - random.nextInt(240_000)) / 1_000 * 1_000;
                final long start = Math.max(0, end - random.nextInt(4) * 5_000L);
                final Windowed<Bytes> session =
                    new Windowed<>(bytes(KEYS[random.nextInt(KEYS.length)]), new SessionWindow(start, end));
                final byte[] value = random.nextInt(8) == 0 ? null : StoreFixture.value("v" + step);
                written.add(session);
                expected.put(session, value);
                actual.put(session, value);
                if (step % 20 == 19) {
                    compareReads(expected, actual, random, streamTime, written);
                }
            }
        } finally {
            expected.close();
        }
        assertTrue(nonEmptyReads > 50, "the reads compared found sessions: " + nonEmptyReads);
    }

    private void compareReads(final SessionStore<Bytes, byte[]> expected, final SessionStore<Bytes, byte[]> actual,
                              final Random random, final long streamTime, final List<Windowed<Bytes>> written) {
        for (int read = 0; read < 10; read++) {
            final Windowed<Bytes> session = written.get(random.nextInt(written.size()));
            final Bytes key = bytes(KEYS[random.nextInt(KEYS.length)]);
            // Kafka Streams rejects negative bounds (IllegalArgumentException); Sluice finds nothing.
            final long earliestEnd = Math.max(0, streamTime - random.nextInt(300_000));
            final long latestStart = Math.max(0, earliestEnd + random.nextInt(200_000) - 20_000);
            final Bytes keyFrom = random.nextInt(5) == 0 ? null : bytes(KEYS[random.nextInt(KEYS.length)]);
            final Bytes keyTo = random.nextInt(5) == 0 ? null : bytes(KEYS[random.nextInt(KEYS.length)]);
            final String what = " key=" + string(key.get()) + " keys=" + keyFrom + ".." + keyTo
                + " earliestEnd=" + earliestEnd + " latestStart=" + latestStart;
            assertEquals(string(expected.fetchSession(session.key(), session.window().start(), session.window().end())),
                string(actual.fetchSession(session.key(), session.window().start(), session.window().end())),
                "fetchSession " + session);
            compare(windowed(expected.findSessions(key, earliestEnd, latestStart)),
                windowed(actual.findSessions(key, earliestEnd, latestStart)), "findSessions(key)" + what);
            compare(windowed(expected.backwardFindSessions(key, earliestEnd, latestStart)),
                windowed(actual.backwardFindSessions(key, earliestEnd, latestStart)), "backwardFindSessions(key)" + what);
            compare(windowed(expected.findSessions(keyFrom, keyTo, earliestEnd, latestStart)),
                windowed(actual.findSessions(keyFrom, keyTo, earliestEnd, latestStart)), "findSessions(range)" + what);
            compare(windowed(expected.backwardFindSessions(keyFrom, keyTo, earliestEnd, latestStart)),
                windowed(actual.backwardFindSessions(keyFrom, keyTo, earliestEnd, latestStart)),
                "backwardFindSessions(range)" + what);
            compare(windowed(expected.fetch(key)), windowed(actual.fetch(key)), "fetch(key)" + what);
            compare(windowed(expected.backwardFetch(key)), windowed(actual.backwardFetch(key)), "backwardFetch(key)" + what);
            compare(windowed(expected.fetch(keyFrom, keyTo)), windowed(actual.fetch(keyFrom, keyTo)), "fetch(range)" + what);
            compare(windowed(expected.backwardFetch(keyFrom, keyTo)), windowed(actual.backwardFetch(keyFrom, keyTo)),
                "backwardFetch(range)" + what);
        }
    }

    private void compare(final List<String> expected, final List<String> actual, final String what) {
        assertEquals(expected, actual, what);
        if (!expected.isEmpty()) {
            nonEmptyReads++;
        }
    }
}
