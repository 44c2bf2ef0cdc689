package dev.sluice.streams.state.internals;

import static dev.sluice.streams.state.internals.StoreFixture.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedBytesStore;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Applies the same random puts and deletes to Kafka Streams' RocksDB versioned store and to Sluice's,
 * both behind the {@link VersionedBytesStore} boundary Kafka Streams' builder wraps, and compares every
 * return value and read byte for byte: put return codes, deletes, latest and as-of reads, inside and
 * beyond the history retention.
 */
class VersionedStoreDifferentialTest {

    private static final Duration HISTORY = Duration.ofMinutes(2);
    private static final String[] KEYS = {"a", "aa", "b", "c"};

    @TempDir
    Path kafkaStreamsDir;

    @TempDir
    Path sluiceDir;

    @ParameterizedTest(name = "seed={0}")
    @ValueSource(longs = {1, 2, 3, 4})
    void everyResultMatchesKafkaStreamsRocksDbVersionedStore(final long seed) {
        final VersionedBytesStore expected = (VersionedBytesStore)
            new StoreFixture(kafkaStreamsDir).init(Stores.persistentVersionedKeyValueStore("v", HISTORY).get());
        final VersionedBytesStore actual = (VersionedBytesStore)
            new StoreFixture(sluiceDir).init(SluiceVersionedBytesStoreSupplier.persistent("v", HISTORY).get());
        final Random random = new Random(seed);
        int found = 0;
        try {
            long streamTime = 0;
            for (int step = 0; step < 600; step++) {
                streamTime += random.nextInt(3_000);
                final long timestamp = Math.max(0, streamTime - random.nextInt(180_000));
                final Bytes key = bytes(KEYS[random.nextInt(KEYS.length)]);
                final String what = "step " + step + " key " + key + " at " + timestamp;
                if (random.nextInt(6) == 0) {
                    assertArrayEquals(expected.delete(key, timestamp), actual.delete(key, timestamp), "delete " + what);
                } else {
                    final byte[] value = random.nextInt(10) == 0 ? null : StoreFixture.value("v" + step);
                    assertEquals(expected.put(key, value, timestamp), actual.put(key, value, timestamp), "put " + what);
                }
                final Bytes read = bytes(KEYS[random.nextInt(KEYS.length)]);
                final long asOf = Math.max(0, streamTime - random.nextInt(200_000));
                assertArrayEquals(expected.get(read), actual.get(read), "get " + read + " after " + what);
                final byte[] asOfValue = expected.get(read, asOf);
                assertArrayEquals(asOfValue, actual.get(read, asOf), "get " + read + " as of " + asOf + " after " + what);
                if (asOfValue != null) {
                    found++;
                }
            }
        } finally {
            expected.close();
            actual.close();
        }
        assertTrue(found > 100, "as-of reads found versions: " + found);
    }
}
