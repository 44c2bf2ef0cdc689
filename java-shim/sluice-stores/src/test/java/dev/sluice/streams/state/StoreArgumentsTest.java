package dev.sluice.streams.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.apache.kafka.streams.state.SessionBytesStoreSupplier;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.junit.jupiter.api.Test;

/**
 * Sluice's factories check their arguments themselves (in the drop-in artifact {@link Stores} is Sluice's
 * and calls them); they must accept, reject and derive exactly what Kafka Streams' own {@link Stores} does.
 * This module's class path has Apache's {@link Stores}, the reference.
 */
class StoreArgumentsTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);
    private static final Duration NEGATIVE = Duration.ofMillis(-1);
    private static final Duration TOO_LONG = Duration.ofSeconds(Long.MAX_VALUE);

    private record WindowArguments(String name, Duration retention, Duration size) {
    }

    @Test
    void windowFactoriesRejectWhatStoresRejects() {
        final List<WindowArguments> rejected = List.of(
            new WindowArguments(null, MINUTE, MINUTE),
            new WindowArguments("w", NEGATIVE, Duration.ZERO),
            new WindowArguments("w", MINUTE, NEGATIVE),
            new WindowArguments("w", MINUTE, MINUTE.multipliedBy(2)),
            new WindowArguments("w", TOO_LONG, MINUTE),
            new WindowArguments("w", MINUTE, TOO_LONG));
        for (final WindowArguments a : rejected) {
            sameRejection(() -> Stores.persistentWindowStore(a.name, a.retention, a.size, false),
                () -> SluiceStores.persistentWindowStore(a.name, a.retention, a.size, false));
            sameRejection(() -> Stores.persistentTimestampedWindowStore(a.name, a.retention, a.size, false),
                () -> SluiceStores.persistentTimestampedWindowStore(a.name, a.retention, a.size, false));
            sameRejection(() -> Stores.persistentTimestampedWindowStoreWithHeaders(a.name, a.retention, a.size, true),
                () -> SluiceStores.persistentTimestampedWindowStoreWithHeaders(a.name, a.retention, a.size, true));
            sameRejection(() -> Stores.inMemoryWindowStore(a.name, a.retention, a.size, false),
                () -> SluiceStores.inMemoryWindowStore(a.name, a.retention, a.size, false));
        }
    }

    @Test
    void windowFactoriesDeriveWhatStoresDerives() {
        for (final Duration retention : List.of(MINUTE, Duration.ofHours(5), Duration.ZERO)) {
            final WindowBytesStoreSupplier kafkaStreams = Stores.persistentWindowStore("w", retention, Duration.ZERO, true);
            final WindowBytesStoreSupplier sluice = SluiceStores.persistentWindowStore("w", retention, Duration.ZERO, true);
            assertEquals(kafkaStreams.retentionPeriod(), sluice.retentionPeriod());
            assertEquals(kafkaStreams.segmentIntervalMs(), sluice.segmentIntervalMs());
            assertEquals(kafkaStreams.windowSize(), sluice.windowSize());
            assertEquals(kafkaStreams.retainDuplicates(), sluice.retainDuplicates());
        }
    }

    @Test
    void sessionFactoriesRejectAndDeriveWhatStoresDoes() {
        for (final Duration retention : List.of(NEGATIVE, TOO_LONG)) {
            sameRejection(() -> Stores.persistentSessionStore("s", retention),
                () -> SluiceStores.persistentSessionStore("s", retention));
            sameRejection(() -> Stores.persistentSessionStoreWithHeaders("s", retention),
                () -> SluiceStores.persistentSessionStoreWithHeaders("s", retention));
            sameRejection(() -> Stores.inMemorySessionStore("s", retention),
                () -> SluiceStores.inMemorySessionStore("s", retention));
        }
        sameRejection(() -> Stores.persistentSessionStore(null, MINUTE), () -> SluiceStores.persistentSessionStore(null, MINUTE));
        final SessionBytesStoreSupplier kafkaStreams = Stores.persistentSessionStore("s", Duration.ofHours(3));
        final SessionBytesStoreSupplier sluice = SluiceStores.persistentSessionStore("s", Duration.ofHours(3));
        assertEquals(kafkaStreams.retentionPeriod(), sluice.retentionPeriod());
        assertEquals(kafkaStreams.segmentIntervalMs(), sluice.segmentIntervalMs());
    }

    @Test
    void versionedFactoriesRejectAndDeriveWhatStoresDoes() {
        sameRejection(() -> Stores.persistentVersionedKeyValueStore("v", NEGATIVE),
            () -> SluiceStores.persistentVersionedKeyValueStore("v", NEGATIVE));
        sameRejection(() -> Stores.persistentVersionedKeyValueStore(null, MINUTE),
            () -> SluiceStores.persistentVersionedKeyValueStore(null, MINUTE));
        for (final Duration segment : List.of(Duration.ZERO, NEGATIVE, TOO_LONG)) {
            sameRejection(() -> Stores.persistentVersionedKeyValueStore("v", MINUTE, segment),
                () -> SluiceStores.persistentVersionedKeyValueStore("v", MINUTE, segment));
        }
        final VersionedBytesStoreSupplier kafkaStreams = Stores.persistentVersionedKeyValueStore("v", MINUTE);
        final VersionedBytesStoreSupplier sluice = SluiceStores.persistentVersionedKeyValueStore("v", MINUTE);
        assertEquals(kafkaStreams.historyRetentionMs(), sluice.historyRetentionMs());
    }

    private static void sameRejection(final Supplier<?> kafkaStreams, final Supplier<?> sluice) {
        final RuntimeException expected = assertThrows(RuntimeException.class, kafkaStreams::get);
        final RuntimeException actual = assertThrows(RuntimeException.class, sluice::get,
            () -> "Sluice accepted what Kafka Streams rejects with " + expected);
        assertEquals(expected.getClass(), actual.getClass(), expected.getMessage());
        assertEquals(expected.getMessage(), actual.getMessage());
    }
}
