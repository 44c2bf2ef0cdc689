package dev.sluice.streams.state.internals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * Byte layouts of the batches that cross to the native library, so that many entries cost one call.
 * All integers are big-endian.
 * <ul>
 *   <li><b>Entries</b> (scan chunks from native code, {@code putAll} batches to it): a sequence of
 *       {@code int keyLength, key, int valueLength, value}; a value length of -1 is a null value (a
 *       deletion in {@code putAll}; chunks never hold one).</li>
 *   <li><b>Offsets</b> (commit): a sequence of {@code int topicLength, topic (UTF-8), int partition,
 *       long offset}; a negative offset removes the partition's stored offset.</li>
 * </ul>
 */
final class EntryFraming {

    static final int NULL_LENGTH = -1;

    private EntryFraming() {
    }

    /** A {@code putAll} batch; null keys raise {@link NullPointerException} as in Kafka Streams. */
    static byte[] entries(final List<KeyValue<Bytes, byte[]>> entries) {
        int size = 0;
        for (final KeyValue<Bytes, byte[]> entry : entries) {
            Objects.requireNonNull(entry.key, "key cannot be null");
            size += 8 + entry.key.get().length + (entry.value == null ? 0 : entry.value.length);
        }
        final ByteBuffer batch = ByteBuffer.allocate(size);
        for (final KeyValue<Bytes, byte[]> entry : entries) {
            putEntry(batch, entry.key.get(), entry.value);
        }
        return batch.array();
    }

    static void putEntry(final ByteBuffer batch, final byte[] key, final byte[] value) {
        batch.putInt(key.length).put(key);
        if (value == null) {
            batch.putInt(NULL_LENGTH);
        } else {
            batch.putInt(value.length).put(value);
        }
    }

    /** The offsets of a commit; a null offset removes the partition's stored offset. */
    static byte[] offsets(final Map<TopicPartition, Long> offsets) {
        int size = 0;
        for (final TopicPartition partition : offsets.keySet()) {
            size += 16 + partition.topic().getBytes(StandardCharsets.UTF_8).length;
        }
        final ByteBuffer frame = ByteBuffer.allocate(size);
        for (final Map.Entry<TopicPartition, Long> entry : offsets.entrySet()) {
            final byte[] topic = entry.getKey().topic().getBytes(StandardCharsets.UTF_8);
            frame.putInt(topic.length).put(topic).putInt(entry.getKey().partition());
            frame.putLong(entry.getValue() == null ? -1L : entry.getValue());
        }
        return frame.array();
    }

    /** Reads one entry of a chunk at the buffer's position. */
    static KeyValue<Bytes, byte[]> readEntry(final ByteBuffer chunk) {
        final byte[] key = new byte[chunk.getInt()];
        chunk.get(key);
        final byte[] value = new byte[chunk.getInt()];
        chunk.get(value);
        return KeyValue.pair(Bytes.wrap(key), value);
    }
}
