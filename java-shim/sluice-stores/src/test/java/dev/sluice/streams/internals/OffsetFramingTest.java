package dev.sluice.streams.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class OffsetFramingTest {

    @Test
    void offsetsRoundTripInOrderWithNone() {
        final Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        offsets.put(new TopicPartition("app-counts-changelog", 3), 41L);
        offsets.put(new TopicPartition("app-other-changelog", 0), null);
        offsets.put(new TopicPartition("big", Integer.MAX_VALUE), Long.MAX_VALUE);
        final byte[] framed = OffsetFraming.write(offsets);
        assertEquals(offsets, OffsetFraming.read(framed));
        assertEquals(offsets.keySet().stream().toList(), OffsetFraming.read(framed).keySet().stream().toList());
        assertEquals(Map.of(), OffsetFraming.read(new byte[0]));
    }

    @Test
    void layoutIsLengthPrefixedTopicPartitionAndOffsetWithMinusOneForNone() {
        final Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        offsets.put(new TopicPartition("t\u00e9", 7), null);
        final ByteBuffer framed = ByteBuffer.wrap(OffsetFraming.write(offsets));
        final byte[] topic = "t\u00e9".getBytes(StandardCharsets.UTF_8);
        assertEquals(topic.length, framed.getInt(), "the topic's length in UTF-8 bytes");
        framed.position(framed.position() + topic.length);
        assertEquals(7, framed.getInt());
        assertEquals(-1L, framed.getLong(), "none is written as -1");
        assertEquals(0, framed.remaining());
    }
}
