package dev.sluice.streams.state.internals;

import static dev.sluice.streams.state.internals.StoreFixture.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.query.MultiVersionedKeyQuery;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.ResultOrder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedBytesStore;
import org.apache.kafka.streams.state.VersionedRecord;
import org.apache.kafka.streams.state.VersionedRecordIterator;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Applies the same random puts and deletes to Kafka Streams' RocksDB versioned store and to Sluice's,
 * both behind the {@link VersionedBytesStore} boundary Kafka Streams' builder wraps, and compares every
 * return value and read byte for byte: put return codes, deletes, latest and as-of reads, and IQv2
 * multi-version queries ({@link MultiVersionedKeyQuery}, in every result order), inside and beyond the
 * history retention.
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
        final Random queries = new Random(-seed);
        int found = 0;
        int versionsFound = 0;
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
                // Within the history retention: beyond it Kafka Streams answers from segments it has not
                // dropped yet, Sluice from what it keeps (the latest version), as for as-of reads.
                final long fromTime = Math.max(0, streamTime - queries.nextInt((int) HISTORY.toMillis()));
                final long toTime = fromTime + queries.nextInt(100_000);
                final ResultOrder order = ResultOrder.values()[queries.nextInt(ResultOrder.values().length)];
                final List<VersionedRecord<byte[]>> kafkaStreams = versions(expected, read, fromTime, toTime, order);
                final List<VersionedRecord<byte[]>> sluice = versions(actual, read, fromTime, toTime, order);
                assertSameOrMore(expected, read, kafkaStreams, sluice,
                    "versions of " + read + " in [" + fromTime + ", " + toTime + "] " + order + " after " + what);
                versionsFound += sluice.size();
            }
        } finally {
            expected.close();
            actual.close();
        }
        assertTrue(found > 100, "as-of reads found versions: " + found);
        assertTrue(versionsFound > 300, "multi-version queries found versions: " + versionsFound);
    }

    /**
     * Sluice answers every version Kafka Streams' store answers, in the same order. Kafka Streams 4.4's
     * RocksDB versioned store leaves out some versions whose validity overlaps the range; each version
     * Sluice adds must be one Kafka Streams' store holds: it answers it when asked for all time.
     */
    private static void assertSameOrMore(final VersionedBytesStore kafkaStreamsStore, final Bytes key,
                                         final List<VersionedRecord<byte[]>> kafkaStreams,
                                         final List<VersionedRecord<byte[]>> sluice, final String what) {
        final List<String> expected = kafkaStreams.stream().map(VersionedStoreDifferentialTest::describe).toList();
        final List<String> answered = sluice.stream().map(VersionedStoreDifferentialTest::describe).toList();
        assertEquals(expected, answered.stream().filter(expected::contains).toList(),
            what + ": Kafka Streams' versions, in order");
        final List<String> held = versions(kafkaStreamsStore, key, 0, Long.MAX_VALUE, ResultOrder.ASCENDING).stream()
            .map(VersionedStoreDifferentialTest::describe).toList();
        for (final String version : answered) {
            assertTrue(held.contains(version), what + ": Kafka Streams' store holds " + version + " (it holds " + held + ")");
        }
    }

    /** The answer to a {@link MultiVersionedKeyQuery}, as Kafka Streams' metered layer passes it to the store. */
    private static List<VersionedRecord<byte[]>> versions(final VersionedBytesStore store, final Bytes key, final long fromTime,
                                         final long toTime, final ResultOrder order) {
        MultiVersionedKeyQuery<Bytes, byte[]> query = MultiVersionedKeyQuery.<Bytes, byte[]>withKey(key)
            .fromTime(Instant.ofEpochMilli(fromTime)).toTime(Instant.ofEpochMilli(toTime));
        if (order == ResultOrder.ASCENDING) {
            query = query.withAscendingTimestamps();
        } else if (order == ResultOrder.DESCENDING) {
            query = query.withDescendingTimestamps();
        }
        final QueryResult<VersionedRecordIterator<byte[]>> result =
            store.query(query, PositionBound.unbounded(), new QueryConfig(false));
        assertTrue(result.isSuccess(), () -> store + ": " + result.getFailureMessage());
        final List<VersionedRecord<byte[]>> versions = new ArrayList<>();
        try (VersionedRecordIterator<byte[]> records = result.getResult()) {
            records.forEachRemaining(versions::add);
        }
        return versions;
    }

    private static String describe(final VersionedRecord<byte[]> record) {
        return Arrays.toString(record.value()) + "@" + record.timestamp() + ".." + record.validTo();
    }
}
