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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An entry framed and read back answers as the {@link LRUCacheEntry} that was written, whether read as a
 * cache read gets it (its context decoded when asked for) or as a flush hands it on (decoded at once).
 */
class CacheEntryFramesTest {

    enum Reading {
        CONTEXT_WHEN_ASKED, CONTEXT_AT_ONCE;

        LRUCacheEntry read(final CacheEntryFrames frames, final byte[] bytes, final int offset, final int length,
                           final boolean dirty) {
            return this == CONTEXT_WHEN_ASKED
                ? frames.read(bytes, offset, length, dirty)
                : frames.readWithContext(bytes, offset, length, dirty);
        }
    }

    private final CacheEntryFrames frames = new CacheEntryFrames();

    @ParameterizedTest
    @EnumSource(Reading.class)
    void anEntryReadBackHasTheWrittenValueContextDirtinessAndSize(final Reading reading) {
        final RecordHeaders headers = new RecordHeaders();
        headers.add("trace", "t-1".getBytes(StandardCharsets.UTF_8));
        headers.add("empty", null);
        final LRUCacheEntry written = new LRUCacheEntry(bytes("v"), headers, true, 42L, 1_000L, 3, "orders",
            bytes("raw-key"), bytes("raw-value"));

        final LRUCacheEntry read = roundTrip(written, reading);

        assertArrayEquals(written.value(), read.value());
        assertTrue(read.isDirty());
        assertEquals(written.size(), read.size());
        assertEquals(written.context(), read.context());
        read.markClean();
        assertFalse(read.isDirty());
    }

    @ParameterizedTest
    @EnumSource(Reading.class)
    void nullValuesTopicsAndSourceRecordsSurvive(final Reading reading) {
        final LRUCacheEntry written = new LRUCacheEntry(null, new RecordHeaders(), false, -1L, -1L, -1, null, null,
            null);

        final LRUCacheEntry read = roundTrip(written, reading);

        assertNull(read.value());
        assertNull(read.context().topic());
        assertNull(read.context().sourceRawKey());
        assertEquals(written.context(), read.context());
        assertEquals(written.size(), read.size());
    }

    @ParameterizedTest
    @EnumSource(Reading.class)
    void entriesReadBackAreEqualExactlyWhenValueContextAndDirtinessAre(final Reading reading) {
        final LRUCacheEntry written = new LRUCacheEntry(bytes("v"), new RecordHeaders(), true, 1L, 2L, 0, "t",
            null, null);

        assertEquals(roundTrip(written, reading), roundTrip(written, reading));
        final LRUCacheEntry later = new LRUCacheEntry(bytes("v"), new RecordHeaders(), true, 1L, 3L, 0, "t", null,
            null);
        assertNotEquals(roundTrip(written, reading), roundTrip(later, reading));
        final LRUCacheEntry otherValue = new LRUCacheEntry(bytes("w"), new RecordHeaders(), true, 1L, 2L, 0, "t",
            null, null);
        assertNotEquals(roundTrip(written, reading), roundTrip(otherValue, reading));
        final LRUCacheEntry clean = roundTrip(written, reading);
        clean.markClean();
        assertNotEquals(roundTrip(written, reading), clean);
    }

    private LRUCacheEntry roundTrip(final LRUCacheEntry entry, final Reading reading) {
        frames.write(entry);
        // Framed at an offset inside a larger buffer, as the native cache's responses carry frames.
        final byte[] buffer = new byte[frames.length() + 7];
        Arrays.fill(buffer, (byte) 0x5a);
        System.arraycopy(frames.frame(), 0, buffer, 3, frames.length());
        final LRUCacheEntry read = reading.read(frames, buffer, 3, frames.length(), entry.isDirty());
        Arrays.fill(buffer, (byte) 0);
        return read;
    }

    private static byte[] bytes(final String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
