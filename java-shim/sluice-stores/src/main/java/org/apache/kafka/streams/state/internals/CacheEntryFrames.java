package org.apache.kafka.streams.state.internals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;

/**
 * The bytes a record cache entry is kept as off the heap, and back: everything an {@link LRUCacheEntry}
 * holds, so that the entry read back equals the one written. Big-endian: {@code value}, then the record
 * context {@code i64 offset, i64 timestamp, i32 partition, i32 topic, i32 headerCount, (key (UTF-8),
 * value) per header, rawKey, rawValue}, where each byte array is {@code i32 length, bytes} and a length
 * of -1 stands for null. Topics are numbered in the order they are first seen, so that a frame carries an
 * {@code int} rather than the name; -1 stands for none. The value comes first so that an entry read back
 * can take it alone and keep the rest as one array, decoded only if someone asks for the record context
 * ({@link FramedCacheEntry}).
 *
 * <p>Not thread-safe: its owner serialises calls.
 */
final class CacheEntryFrames {

    private static final int NULL_LENGTH = -1;
    private static final int NO_TOPIC = -1;
    /** Where a record context's topic id lies in its frame: after its offset, timestamp and partition. */
    private static final int TOPIC_ID_POSITION = Long.BYTES + Long.BYTES + Integer.BYTES;
    /** The bytes of a record context's fixed fields: offset, timestamp, partition and topic id. */
    private static final int CONTEXT_FIXED_BYTES = TOPIC_ID_POSITION + Integer.BYTES;

    private final Map<String, Integer> topicIds = new HashMap<>();
    private final List<String> topics = new ArrayList<>();
    private ByteBuffer frame = ByteBuffer.allocate(256);

    /** Frames {@code entry} into the buffer {@link #frame()} returns, whose first {@link #length()} bytes it fills. */
    void write(final LRUCacheEntry entry) {
        final ProcessorRecordContext context = entry.context();
        frame.clear();
        putBytes(entry.value());
        ensure(CONTEXT_FIXED_BYTES);
        frame.putLong(context.offset()).putLong(context.timestamp()).putInt(context.partition())
            .putInt(topicId(context.topic()));
        final Header[] headers = context.headers() == null ? new Header[0] : context.headers().toArray();
        ensure(4);
        frame.putInt(headers.length);
        for (final Header header : headers) {
            putBytes(header.key().getBytes(StandardCharsets.UTF_8));
            putBytes(header.value());
        }
        putBytes(context.sourceRawKey());
        putBytes(context.sourceRawValue());
    }

    byte[] frame() {
        return frame.array();
    }

    int length() {
        return frame.position();
    }

    /**
     * The entry framed in {@code bytes[offset, offset + length)}, dirty or not, its record context kept as
     * bytes until asked for: what a read of the cache gets, which wants the value alone.
     */
    LRUCacheEntry read(final byte[] bytes, final int offset, final int length, final boolean dirty) {
        final ByteBuffer in = ByteBuffer.wrap(bytes, offset, length);
        final byte[] value = getBytes(in);
        final int contextStart = in.position();
        final String topic = topicName(in.getInt(contextStart + TOPIC_ID_POSITION));
        return new FramedCacheEntry(value, Arrays.copyOfRange(bytes, contextStart, offset + length), topic, dirty);
    }

    /**
     * The entry framed in {@code bytes[offset, offset + length)}, dirty or not, with its record context
     * decoded: what a flush or an eviction hands on, whose listener forwards every entry in its context.
     */
    LRUCacheEntry readWithContext(final byte[] bytes, final int offset, final int length, final boolean dirty) {
        final ByteBuffer in = ByteBuffer.wrap(bytes, offset, length);
        final byte[] value = getBytes(in);
        final long recordOffset = in.getLong();
        final long timestamp = in.getLong();
        final int partition = in.getInt();
        final String topic = topicName(in.getInt());
        final Headers headers = getHeaders(in);
        return new LRUCacheEntry(value, headers, dirty, recordOffset, timestamp, partition, topic, getBytes(in),
            getBytes(in));
    }

    /** The record context framed in {@code context} (as {@link #read} kept it), on {@code topic}. */
    static ProcessorRecordContext readContext(final byte[] context, final String topic) {
        final ByteBuffer in = ByteBuffer.wrap(context);
        final long offset = in.getLong();
        final long timestamp = in.getLong();
        final int partition = in.getInt();
        in.getInt();
        final Headers headers = getHeaders(in);
        final byte[] rawKey = getBytes(in);
        final byte[] rawValue = getBytes(in);
        return new ProcessorRecordContext(timestamp, offset, partition, topic, headers, rawKey, rawValue);
    }

    private static Headers getHeaders(final ByteBuffer in) {
        final int headerCount = in.getInt();
        final Headers headers = new RecordHeaders();
        for (int i = 0; i < headerCount; i++) {
            headers.add(new String(getBytes(in), StandardCharsets.UTF_8), getBytes(in));
        }
        return headers;
    }

    private int topicId(final String topic) {
        if (topic == null) {
            return NO_TOPIC;
        }
        final Integer id = topicIds.get(topic);
        if (id != null) {
            return id;
        }
        topics.add(topic);
        topicIds.put(topic, topics.size() - 1);
        return topics.size() - 1;
    }

    private String topicName(final int id) {
        return id == NO_TOPIC ? null : topics.get(id);
    }

    private void putBytes(final byte[] bytes) {
        if (bytes == null) {
            ensure(4);
            frame.putInt(NULL_LENGTH);
        } else {
            ensure(4 + bytes.length);
            frame.putInt(bytes.length).put(bytes);
        }
    }

    private static byte[] getBytes(final ByteBuffer in) {
        final int length = in.getInt();
        if (length == NULL_LENGTH) {
            return null;
        }
        final byte[] bytes = new byte[length];
        in.get(bytes);
        return bytes;
    }

    private void ensure(final int more) {
        if (frame.remaining() < more) {
            final ByteBuffer larger = ByteBuffer.allocate(Math.max(frame.capacity() * 2, frame.position() + more));
            frame.flip();
            larger.put(frame);
            frame = larger;
        }
    }
}
