package dev.sluice.streams.internals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * The one byte layout of offsets by partition that crosses to the native library, for stores (the
 * changelog offsets they commit) and for the engine (committed, delivered and log-start offsets, lags):
 * a sequence of {@code int topicLength, topic (UTF-8), int partition, long offset}, big-endian, an offset
 * of -1 meaning none.
 */
public final class OffsetFraming {

    /** How "no offset" is written. */
    public static final long NO_OFFSET = -1L;

    private OffsetFraming() {
    }

    /** {@code offsets} in their iteration order; a null offset is written as {@link #NO_OFFSET}. */
    public static byte[] write(final Map<TopicPartition, Long> offsets) {
        final Map<TopicPartition, byte[]> topics = new LinkedHashMap<>();
        int size = 0;
        for (final TopicPartition partition : offsets.keySet()) {
            final byte[] topic = partition.topic().getBytes(StandardCharsets.UTF_8);
            topics.put(partition, topic);
            size += Integer.BYTES + topic.length + Integer.BYTES + Long.BYTES;
        }
        final ByteBuffer frame = ByteBuffer.allocate(size);
        for (final Map.Entry<TopicPartition, Long> entry : offsets.entrySet()) {
            final byte[] topic = topics.get(entry.getKey());
            frame.putInt(topic.length).put(topic).putInt(entry.getKey().partition());
            frame.putLong(entry.getValue() == null ? NO_OFFSET : entry.getValue());
        }
        return frame.array();
    }

    /** The offsets of {@code framed} in their framed order; {@link #NO_OFFSET} is read as null. */
    public static Map<TopicPartition, Long> read(final byte[] framed) {
        final ByteBuffer in = ByteBuffer.wrap(framed);
        final Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        while (in.hasRemaining()) {
            final byte[] topic = new byte[in.getInt()];
            in.get(topic);
            final TopicPartition partition = new TopicPartition(new String(topic, StandardCharsets.UTF_8), in.getInt());
            final long offset = in.getLong();
            offsets.put(partition, offset == NO_OFFSET ? null : offset);
        }
        return offsets;
    }
}
