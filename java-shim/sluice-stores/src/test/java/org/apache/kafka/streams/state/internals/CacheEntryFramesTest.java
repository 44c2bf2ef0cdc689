package org.apache.kafka.streams.state.internals;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** An entry framed and read back answers as the {@link LRUCacheEntry} that was written. */
class CacheEntryFramesTest {

    private final CacheEntryFrames frames = new CacheEntryFrames();

    @Test
    void anEntryReadBackHasTheWrittenValueContextDirtinessAndSize() {
        final RecordHeaders headers = new RecordHeaders();
        headers.add("trace", "t-1".getBytes(StandardCharsets.UTF_8));
        headers.add("empty", null);
        final LRUCacheEntry written = new LRUCacheEntry(bytes("v"), headers, true, 42L, 1_000L, 3, "orders",
            bytes("raw-key"), bytes("raw-value"));

        final LRUCacheEntry read = roundTrip(written);

        assertArrayEquals(written.value(), read.value());
        assertTrue(read.isDirty());
        assertEquals(written.size(), read.size());
        assertEquals(written.context(), read.context());
        read.markClean();
        assertFalse(read.isDirty());
    }

    @Test
    void nullValuesTopicsAndSourceRecordsSurvive() {
        final LRUCacheEntry written = new LRUCacheEntry(null, new RecordHeaders(), false, -1L, -1L, -1, null, null,
            null);

        final LRUCacheEntry read = roundTrip(written);

        assertNull(read.value());
        assertNull(read.context().topic());
        assertNull(read.context().sourceRawKey());
        assertEquals(written.context(), read.context());
        assertEquals(written.size(), read.size());
    }

    @Test
    void entriesReadBackAreEqualExactlyWhenValueContextAndDirtinessAre() {
        final LRUCacheEntry written = new LRUCacheEntry(bytes("v"), new RecordHeaders(), true, 1L, 2L, 0, "t",
            null, null);

        assertEquals(roundTrip(written), roundTrip(written));
        assertNotEquals(roundTrip(written), roundTrip(new LRUCacheEntry(bytes("v"), new RecordHeaders(), true, 1L,
            3L, 0, "t", null, null)));
        assertNotEquals(roundTrip(written), roundTrip(new LRUCacheEntry(bytes("w"), new RecordHeaders(), true, 1L,
            2L, 0, "t", null, null)));
        final LRUCacheEntry clean = roundTrip(written);
        clean.markClean();
        assertNotEquals(roundTrip(written), clean);
    }

    private LRUCacheEntry roundTrip(final LRUCacheEntry entry) {
        frames.write(entry);
        // Framed at an offset inside a larger buffer, as the native cache's responses carry frames.
        final byte[] buffer = new byte[frames.length() + 7];
        Arrays.fill(buffer, (byte) 0x5a);
        System.arraycopy(frames.frame(), 0, buffer, 3, frames.length());
        final LRUCacheEntry read = frames.read(buffer, 3, frames.length(), entry.isDirty());
        Arrays.fill(buffer, (byte) 0);
        return read;
    }

    private static byte[] bytes(final String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
