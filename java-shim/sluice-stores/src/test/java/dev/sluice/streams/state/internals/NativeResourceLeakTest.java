package dev.sluice.streams.state.internals;

import static dev.sluice.streams.state.internals.StoreFixture.bytes;
import static dev.sluice.streams.state.internals.StoreFixture.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Thousands of open / write / iterate / commit / close cycles must release every native object: the
 * handle counts return to where they started, and the process's resident memory stays bounded.
 */
class NativeResourceLeakTest {

    private static final int WARM_UP_CYCLES = 200;
    private static final int MEASURED_CYCLES = 2000;
    /** Far below what leaking a RocksDB instance, a scan or the shared cache per cycle would cost. */
    private static final long ALLOWED_GROWTH_BYTES = 96L << 20;

    @TempDir
    Path stateDir;

    @Test
    void openWriteIterateCloseCyclesReleaseEverything() throws IOException {
        final long stores = NativeHandles.liveStores();
        final long iterators = NativeHandles.liveIterators();
        final long resources = NativeHandles.liveRocksDbResources();

        for (int i = 0; i < WARM_UP_CYCLES; i++) {
            cycle(i);
        }
        final long rssBefore = residentBytes();
        for (int i = 0; i < MEASURED_CYCLES; i++) {
            cycle(i);
        }
        final long rssAfter = residentBytes();

        assertEquals(stores, NativeHandles.liveStores());
        assertEquals(iterators, NativeHandles.liveIterators());
        assertEquals(resources, NativeHandles.liveRocksDbResources());
        assertTrue(rssAfter - rssBefore < ALLOWED_GROWTH_BYTES,
            "resident memory grew from " + rssBefore + " to " + rssAfter + " bytes over " + MEASURED_CYCLES + " cycles");
    }

    private void cycle(final int round) {
        final KeyValueBackend backend = round % 2 == 0 ? KeyValueBackend.ROCKS_DB : KeyValueBackend.IN_MEMORY;
        final SluiceKeyValueBytesStore store = new StoreFixture(stateDir).open(backend, 256);
        for (int k = 0; k < 100; k++) {
            store.put(bytes("key-" + k), value("value-" + round + "-" + k));
        }
        try (KeyValueIterator<Bytes, byte[]> all = store.all()) {
            while (all.hasNext()) {
                all.next();
            }
        }
        store.commit(Map.of(new TopicPartition("changelog", 0), (long) round));
        store.delete(bytes("key-0"));
        // Left open on purpose: closing the store must release it.
        final KeyValueIterator<Bytes, byte[]> abandoned = store.range(bytes("key-1"), bytes("key-5"));
        abandoned.hasNext();
        store.close();
    }

    /** VmRSS of this process, from /proc/self/status. */
    private static long residentBytes() throws IOException {
        System.gc();
        for (final String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }
}
