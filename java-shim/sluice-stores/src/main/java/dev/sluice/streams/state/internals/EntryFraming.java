package dev.sluice.streams.state.internals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.kstream.internals.TimeWindow;
import org.apache.kafka.streams.state.VersionedRecord;

/**
 * Byte layouts of the batches that cross to the native library, so that many entries cost one call.
 * All integers are big-endian.
 * <ul>
 *   <li><b>Entries</b> (scan chunks from native code, {@code putAll} batches to it): a sequence of
 *       {@code int keyLength, key, int valueLength, value}; a value length of -1 is a null value (a
 *       deletion in {@code putAll}; chunks never hold one).</li>
 *   <li><b>Windowed entries</b> (window and session scan chunks): entries whose key is the record key
 *       followed by its window, {@code key, long windowStart} for window stores and
 *       {@code key, long sessionStart, long sessionEnd} for session stores.</li>
 *   <li><b>Timestamped entries</b> (versioned restore batches): entries followed by {@code long timestamp}.</li>
 *   <li><b>Versioned records</b> (versioned reads): {@code long timestamp, long validTo, value}, a valid-to
 *       of -1 meaning none; several of them (multi-version reads) as a sequence of {@code int length,
 *       versioned record}.</li>
 * </ul>
 * The changelog offsets of a commit are framed by {@link dev.sluice.streams.internals.OffsetFraming}.
 */
final class EntryFraming {

    static final int NULL_LENGTH = -1;

    private static final long NO_VALID_TO = -1L;

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

    /** A changelog restore batch: record keys and values (null deletes) as entries. */
    static byte[] records(final List<ConsumerRecord<byte[], byte[]>> records) {
        int size = 0;
        for (final ConsumerRecord<byte[], byte[]> record : records) {
            size += 8 + record.key().length + (record.value() == null ? 0 : record.value().length);
        }
        final ByteBuffer batch = ByteBuffer.allocate(size);
        for (final ConsumerRecord<byte[], byte[]> record : records) {
            putEntry(batch, record.key(), record.value());
        }
        return batch.array();
    }

    /** A versioned restore batch: entries followed by each record's timestamp. */
    static byte[] timestampedRecords(final List<ConsumerRecord<byte[], byte[]>> records) {
        int size = 0;
        for (final ConsumerRecord<byte[], byte[]> record : records) {
            size += 16 + record.key().length + (record.value() == null ? 0 : record.value().length);
        }
        final ByteBuffer batch = ByteBuffer.allocate(size);
        for (final ConsumerRecord<byte[], byte[]> record : records) {
            putEntry(batch, record.key(), record.value());
            batch.putLong(record.timestamp());
        }
        return batch.array();
    }

    /** The window start a windowed entry's key ends with. */
    static long windowStart(final Bytes framedKey) {
        final byte[] key = framedKey.get();
        return ByteBuffer.wrap(key, key.length - Long.BYTES, Long.BYTES).getLong();
    }

    /**
     * The windowed key of a window store entry; the window ends {@code windowSize} after its start, or
     * at {@code Long.MAX_VALUE} when that overflows, as in Kafka Streams' window key schema.
     */
    static Windowed<Bytes> windowedKey(final Bytes framedKey, final long windowSize) {
        final byte[] framed = framedKey.get();
        final long start = windowStart(framedKey);
        final long end = start + windowSize < start ? Long.MAX_VALUE : start + windowSize;
        final byte[] key = java.util.Arrays.copyOf(framed, framed.length - Long.BYTES);
        return new Windowed<>(Bytes.wrap(key), new TimeWindow(start, end));
    }

    /** The windowed key of a session store entry. */
    static Windowed<Bytes> sessionKey(final Bytes framedKey) {
        final byte[] framed = framedKey.get();
        final ByteBuffer window = ByteBuffer.wrap(framed, framed.length - 2 * Long.BYTES, 2 * Long.BYTES);
        final long start = window.getLong();
        final long end = window.getLong();
        final byte[] key = java.util.Arrays.copyOf(framed, framed.length - 2 * Long.BYTES);
        return new Windowed<>(Bytes.wrap(key), new SessionWindow(start, end));
    }

    /** A versioned record, or null for null. */
    static VersionedRecord<byte[]> versionedRecord(final byte[] framed) {
        if (framed == null) {
            return null;
        }
        final ByteBuffer record = ByteBuffer.wrap(framed);
        final long timestamp = record.getLong();
        final long validTo = record.getLong();
        final byte[] value = new byte[record.remaining()];
        record.get(value);
        return validTo == NO_VALID_TO
            ? new VersionedRecord<>(value, timestamp)
            : new VersionedRecord<>(value, timestamp, validTo);
    }

    /** A sequence of length-prefixed versioned records. */
    static List<VersionedRecord<byte[]>> versionedRecords(final byte[] framed) {
        final List<VersionedRecord<byte[]>> records = new ArrayList<>();
        final ByteBuffer sequence = ByteBuffer.wrap(framed);
        while (sequence.hasRemaining()) {
            final byte[] record = new byte[sequence.getInt()];
            sequence.get(record);
            records.add(versionedRecord(record));
        }
        return records;
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
