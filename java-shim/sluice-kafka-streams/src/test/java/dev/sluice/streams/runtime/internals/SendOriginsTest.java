package dev.sluice.streams.runtime.internals;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.internals.ProcessorNode;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.junit.jupiter.api.Test;

class SendOriginsTest {

    private static final ProcessorNode<?, ?, ?, ?> SOURCE = new ProcessorNode<>("source");
    private static final ProcessorNode<?, ?, ?, ?> SINK = new ProcessorNode<>("sink");

    private static ProcessorRecordContext context(final long offset) {
        return new ProcessorRecordContext(1000 + offset, offset, (int) (offset % 3), "input", new RecordHeaders());
    }

    @Test
    void aFailedRecordsOriginIsTheContextAndNodeItWasSentFrom() {
        final SendOrigins origins = new SendOrigins();
        final RecordHeaders headers = new RecordHeaders();
        headers.add("trace", "t-1".getBytes(StandardCharsets.UTF_8));
        final ProcessorRecordContext withHeaders = new ProcessorRecordContext(7L, 5L, 2, "input", headers,
            new byte[] {1}, new byte[] {2});
        origins.sent(context(4), SOURCE);
        origins.sent(withHeaders, SINK);
        origins.sent(withHeaders, SINK);

        final SendOrigins.Origin first = origins.origin(0);
        assertEquals(4L, first.record().offset());
        assertEquals(1004L, first.record().timestamp());
        assertEquals(1, first.record().partition());
        assertEquals("input", first.record().topic());
        assertFalse(first.record().headers().iterator().hasNext(), "empty headers come back empty");
        assertSame(SOURCE, first.node());

        for (final long index : new long[] {1, 2}) {
            final SendOrigins.Origin origin = origins.origin(index);
            assertEquals(5L, origin.record().offset());
            assertEquals(7L, origin.record().timestamp());
            assertEquals(2, origin.record().partition());
            assertSame(headers, origin.record().headers());
            assertArrayEquals(new byte[] {1}, origin.record().sourceRawKey());
            assertArrayEquals(new byte[] {2}, origin.record().sourceRawValue());
            assertSame(SINK, origin.node());
        }
        assertThrows(IllegalStateException.class, () -> origins.origin(3), "nothing was sent as record 3");
    }

    @Test
    void answeredRecordsAreForgottenAndACommitForgetsAll() {
        final SendOrigins origins = new SendOrigins();
        final ProcessorRecordContext shared = context(0);
        origins.sent(shared, SOURCE);
        origins.sent(shared, SOURCE);
        origins.sent(context(1), SOURCE);
        origins.answered(1);
        assertEquals(0L, origins.origin(1).record().offset(), "record 1 shares record 0's origin and is unanswered");
        origins.answered(2);
        assertThrows(IllegalStateException.class, () -> origins.origin(1));
        assertEquals(1L, origins.origin(2).record().offset());
        // The same context sent from again after its entry was answered makes a new entry.
        origins.sent(context(1), SOURCE);
        assertEquals(1L, origins.origin(3).record().offset());

        origins.clear();
        assertThrows(IllegalStateException.class, () -> origins.origin(0), "a commit starts the numbers again");
        origins.sent(context(9), SINK);
        assertEquals(9L, origins.origin(0).record().offset());
        assertNull(origins.origin(0).record().sourceRawKey());
    }

    @Test
    void manyEntriesAnsweredAsTheyGoKeepTheirOriginsAcrossGrowthAndCompaction() {
        final SendOrigins origins = new SendOrigins();
        long sent = 0;
        long answeredBelow = 0;
        for (int round = 0; round < 200; round++) {
            // Each round sends a varying number of records, two per context, and answers a varying prefix.
            final int records = 2 * (1 + (round * 37) % 300);
            for (int i = 0; i < records; i += 2) {
                final ProcessorRecordContext context = context(sent / 2);
                origins.sent(context, SOURCE);
                origins.sent(context, SOURCE);
                sent += 2;
            }
            answeredBelow = Math.max(answeredBelow, sent - (round * 53) % 700);
            origins.answered(answeredBelow);
            for (final long index : List.of(answeredBelow, (answeredBelow + sent - 1) / 2, sent - 1)) {
                if (index >= answeredBelow && index < sent) {
                    assertEquals(index / 2, origins.origin(index).record().offset(), "record " + index);
                }
            }
        }
        final long firstEntry = answeredBelow - answeredBelow % 2;
        assertEquals(firstEntry / 2, origins.origin(firstEntry).record().offset());
        final long answered = firstEntry - 1;
        assertThrows(IllegalStateException.class, () -> origins.origin(answered), "record " + answered + " is answered");
    }
}
