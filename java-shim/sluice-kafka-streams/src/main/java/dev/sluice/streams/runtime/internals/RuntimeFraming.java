package dev.sluice.streams.runtime.internals;

import dev.sluice.streams.internals.OffsetFraming;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;

/**
 * Byte layouts of what crosses between the engine and the task runners, so that a batch of records
 * costs one call. All integers are big-endian, strings UTF-8, lengths in bytes; a length of -1 is null.
 * <ul>
 *   <li><b>Properties</b>: repeated {@code int keyLength, key, int valueLength, value}.</li>
 *   <li><b>Offsets</b>: as {@link OffsetFraming} frames them.</li>
 *   <li><b>Consumer lags</b>: repeated {@code int thread, byte consumer (0: the main consumer, 1: the restore
 *       consumer), int topicLength, topic, int partition, long lag}.</li>
 *   <li><b>Inputs</b>: repeated {@code int topicLength, topic, int partition, long committedOffset (-1 none),
 *       int metadataLength (-1 none), metadata}.</li>
 *   <li><b>Consumed records</b>: {@code int runCount}, then per run of records of one partition
 *       {@code int topicLength, topic, int partition, int recordCount} and per record {@code long offset,
 *       long timestamp, int keyLength, key, int valueLength, value, int headerCount} and per header
 *       {@code int keyLength, key, int valueLength, value}.</li>
 *   <li><b>Produced records</b>: {@code int count}, then per record {@code int topicLength, topic,
 *       int partition, long timestamp}, key, value and headers as in consumed records; a partition of -1
 *       lets the engine's producer choose it from the key. They go to the engine in an array that follows
 *       an {@code int} saying how many bytes the batch takes, which it copies as the call returns: that
 *       array is reused, so a batch leaves no garbage.</li>
 * </ul>
 */
final class RuntimeFraming {

    static final int NULL_LENGTH = -1;
    static final long NO_OFFSET = -1L;
    static final int ANY_PARTITION = -1;
    /** The consumer a framed lag is of: the main consumer's, else the restore consumer's. */
    private static final byte MAIN_CONSUMER = 0;

    private static final byte[] EMPTY = new byte[0];
    private static final Header[] NO_HEADERS = new Header[0];
    /** A drained batch of no records (see {@link ProducedRecords#drain}); the engine only reads it. */
    private static final byte[] EMPTY_RECORDS = ByteBuffer.allocate(2 * Integer.BYTES).putInt(Integer.BYTES).array();
    private static final int INITIAL_PRODUCED_BYTES = 4 << 10;
    /** Where a drained batch's first record starts: after the batch's length and its count of records. */
    private static final int BATCH_START = 2 * Integer.BYTES;
    // A task's buffer of produced records that grew past this for a burst (a cache flush, say) is not kept
    // for the next batch: every task has one, and kept at a burst's size they would hold megabytes each.
    private static final int RETAINED_PRODUCED_BYTES = 1 << 20;

    private RuntimeFraming() {
    }

    static byte[] properties(final Map<String, String> properties) {
        final Writer out = new Writer();
        for (final Map.Entry<String, String> property : properties.entrySet()) {
            out.string(property.getKey());
            out.string(property.getValue());
        }
        return out.toBytes();
    }

    static Map<String, String> readProperties(final byte[] framed) {
        final ByteBuffer in = ByteBuffer.wrap(framed);
        final Map<String, String> properties = new LinkedHashMap<>();
        while (in.hasRemaining()) {
            properties.put(readString(in), readString(in));
        }
        return properties;
    }

    /** Input partitions with their committed offset and metadata; a null value has neither. */
    static byte[] inputs(final Map<TopicPartition, OffsetAndMetadata> inputs) {
        final Writer out = new Writer();
        for (final Map.Entry<TopicPartition, OffsetAndMetadata> entry : inputs.entrySet()) {
            out.partition(entry.getKey());
            final OffsetAndMetadata committed = entry.getValue();
            out.buffer(Long.BYTES).putLong(committed == null ? NO_OFFSET : committed.offset());
            out.string(committed == null || committed.metadata().isEmpty() ? null : committed.metadata());
        }
        return out.toBytes();
    }

    /** Input partitions in their framed order, null for those without a committed offset. */
    static Map<TopicPartition, OffsetAndMetadata> readInputs(final byte[] framed) {
        final ByteBuffer in = ByteBuffer.wrap(framed);
        final Map<TopicPartition, OffsetAndMetadata> inputs = new LinkedHashMap<>();
        while (in.hasRemaining()) {
            final TopicPartition partition = readPartition(in);
            final long offset = in.getLong();
            final String metadata = readString(in);
            inputs.put(partition, offset == NO_OFFSET
                ? null
                : new OffsetAndMetadata(offset, Optional.empty(), metadata == null ? "" : metadata));
        }
        return inputs;
    }

    /** Frames consumed records as the engine does, a run for each sequence of records of one partition. */
    static ByteBuffer consumedRecords(final List<ConsumerRecord<byte[], byte[]>> records) {
        final List<List<ConsumerRecord<byte[], byte[]>>> runs = new ArrayList<>();
        for (final ConsumerRecord<byte[], byte[]> record : records) {
            final List<ConsumerRecord<byte[], byte[]>> last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
            if (last != null && last.get(0).topic().equals(record.topic()) && last.get(0).partition() == record.partition()) {
                last.add(record);
            } else {
                runs.add(new ArrayList<>(List.of(record)));
            }
        }
        final Writer out = new Writer();
        out.buffer(Integer.BYTES).putInt(runs.size());
        for (final List<ConsumerRecord<byte[], byte[]>> run : runs) {
            out.string(run.get(0).topic());
            out.buffer(2 * Integer.BYTES).putInt(run.get(0).partition()).putInt(run.size());
            for (final ConsumerRecord<byte[], byte[]> record : run) {
                out.buffer(2 * Long.BYTES).putLong(record.offset()).putLong(record.timestamp());
                out.bytes(record.key());
                out.bytes(record.value());
                out.headers(record.headers());
            }
        }
        return ByteBuffer.wrap(out.toBytes());
    }

    /**
     * Consumed records, CreateTime-stamped, by partition in their framed order; the records of a partition
     * share one topic string.
     */
    static Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> readConsumedRecords(final ByteBuffer framed) {
        final ByteBuffer in = framed.duplicate();
        final int runs = in.getInt();
        final Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> byPartition = new LinkedHashMap<>();
        for (int run = 0; run < runs; run++) {
            final TopicPartition partition = readPartition(in);
            final String topic = partition.topic();
            final int count = in.getInt();
            final List<ConsumerRecord<byte[], byte[]>> records =
                byPartition.computeIfAbsent(partition, p -> new ArrayList<>(count));
            for (int i = 0; i < count; i++) {
                final long offset = in.getLong();
                final long timestamp = in.getLong();
                final byte[] key = readBytes(in);
                final byte[] value = readBytes(in);
                final Headers headers = readHeaders(in);
                records.add(new ConsumerRecord<>(topic, partition.partition(), offset, timestamp,
                    TimestampType.CREATE_TIME,
                    key == null ? ConsumerRecord.NULL_SIZE : key.length,
                    value == null ? ConsumerRecord.NULL_SIZE : value.length,
                    key, value, headers, Optional.empty()));
            }
        }
        return byPartition;
    }

    /** Frames {@code records} as the engine frames a record it hands back after a failed send. */
    static byte[] producedRecords(final List<ProducerRecord<byte[], byte[]>> records) {
        final ProducedRecords out = new ProducedRecords();
        records.forEach(out::add);
        final ByteBuffer batch = drainedBatch(out.drain());
        return Arrays.copyOfRange(batch.array(), batch.position(), batch.limit());
    }

    /** The records of a batch {@link ProducedRecords#drain} returned. */
    static List<ProducerRecord<byte[], byte[]>> readDrainedRecords(final byte[] drained) {
        return readProducedRecords(drainedBatch(drained));
    }

    /** The records of a batch framed as the engine frames those it hands back. */
    static List<ProducerRecord<byte[], byte[]>> readProducedRecords(final byte[] framed) {
        return readProducedRecords(ByteBuffer.wrap(framed));
    }

    private static ByteBuffer drainedBatch(final byte[] drained) {
        return ByteBuffer.wrap(drained, Integer.BYTES, ByteBuffer.wrap(drained).getInt());
    }

    private static List<ProducerRecord<byte[], byte[]>> readProducedRecords(final ByteBuffer in) {
        final int count = in.getInt();
        final List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            final String topic = readString(in);
            final int partition = in.getInt();
            final long timestamp = in.getLong();
            final byte[] key = readBytes(in);
            final byte[] value = readBytes(in);
            final Headers headers = readHeaders(in);
            records.add(new ProducerRecord<>(topic, partition == ANY_PARTITION ? null : partition,
                timestamp == NO_OFFSET ? null : timestamp, key, value, headers));
        }
        return records;
    }

    /** A drained batch of no records. */
    static byte[] emptyRecords() {
        return EMPTY_RECORDS;
    }

    /** Each engine thread's lags behind the partitions its two consumers read, by thread index. */
    record ConsumerLags(Map<Integer, Map<TopicPartition, Long>> main, Map<Integer, Map<TopicPartition, Long>> restore) {
    }

    static ConsumerLags readConsumerLags(final byte[] framed) {
        final ByteBuffer in = ByteBuffer.wrap(framed);
        final ConsumerLags lags = new ConsumerLags(new LinkedHashMap<>(), new LinkedHashMap<>());
        while (in.hasRemaining()) {
            final int thread = in.getInt();
            final Map<Integer, Map<TopicPartition, Long>> ofConsumer =
                in.get() == MAIN_CONSUMER ? lags.main() : lags.restore();
            final TopicPartition partition = readPartition(in);
            ofConsumer.computeIfAbsent(thread, t -> new LinkedHashMap<>()).put(partition, in.getLong());
        }
        return lags;
    }

    private static TopicPartition readPartition(final ByteBuffer in) {
        final String topic = readString(in);
        return new TopicPartition(topic, in.getInt());
    }

    private static String readString(final ByteBuffer in) {
        final byte[] bytes = readBytes(in);
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] readBytes(final ByteBuffer in) {
        final int length = in.getInt();
        if (length == NULL_LENGTH) {
            return null;
        }
        final byte[] bytes = length == 0 ? EMPTY : new byte[length];
        in.get(bytes);
        return bytes;
    }

    private static Headers readHeaders(final ByteBuffer in) {
        final int count = in.getInt();
        final RecordHeaders headers = new RecordHeaders();
        for (int i = 0; i < count; i++) {
            headers.add(readString(in), readBytes(in));
        }
        return headers;
    }

    /**
     * Produced records framed as they are added, so that a batch costs no copy of the records and
     * their headers, into an array reused from batch to batch. On the heap rather than direct: a direct
     * buffer given up after a burst holds its native memory until a collection finds it, which for a
     * long-lived buffer in the old generation can be many seconds; an array is the collector's to size.
     */
    static final class ProducedRecords {
        private final Writer out = new Writer(INITIAL_PRODUCED_BYTES);
        // Topic names are few and come back as the same strings: each is encoded once.
        private final Map<String, byte[]> topics = new HashMap<>();
        private int count;

        ProducedRecords() {
            out.buffer.position(BATCH_START);
        }

        void add(final ProducerRecord<byte[], byte[]> record) {
            final byte[] topic = topics.computeIfAbsent(record.topic(), t -> t.getBytes(StandardCharsets.UTF_8));
            out.bytes(topic);
            // Kafka Streams always stamps what it sends; a missing timestamp is the producer's to set.
            out.buffer(Integer.BYTES + Long.BYTES)
                .putInt(record.partition() == null ? ANY_PARTITION : record.partition())
                .putLong(record.timestamp() == null ? NO_OFFSET : record.timestamp());
            out.bytes(record.key());
            out.bytes(record.value());
            out.headers(record.headers());
            count++;
        }

        /**
         * The records added since the last call, framed in an array that stays as it is until the next
         * record is added and whose first {@code int} is how many of the bytes after it are the batch;
         * none are kept.
         */
        byte[] drain() {
            if (count == 0) {
                return emptyRecords();
            }
            out.buffer.putInt(0, out.buffer.position() - Integer.BYTES).putInt(Integer.BYTES, count);
            final byte[] drained = out.buffer.array();
            clear();
            return drained;
        }

        /** Forgets the records added since the last drain. */
        void clear() {
            if (out.buffer.capacity() > RETAINED_PRODUCED_BYTES) {
                out.buffer = ByteBuffer.allocate(INITIAL_PRODUCED_BYTES);
            }
            // The length and count are written as a batch is drained; the bytes of the last batch stay as
            // they are until the next record is added, after the engine took them.
            out.buffer.clear().position(BATCH_START);
            count = 0;
        }
    }

    /** A growing big-endian buffer on the heap. */
    private static final class Writer {
        static final int INITIAL_BYTES = 256;
        private ByteBuffer buffer;

        Writer() {
            this(INITIAL_BYTES);
        }

        Writer(final int initialBytes) {
            buffer = ByteBuffer.allocate(initialBytes);
        }

        ByteBuffer buffer(final int needed) {
            if (buffer.remaining() < needed) {
                final int capacity = Math.max(buffer.capacity() * 2, buffer.position() + needed);
                final ByteBuffer grown = ByteBuffer.allocate(capacity);
                buffer.flip();
                grown.put(buffer);
                buffer = grown;
            }
            return buffer;
        }

        void bytes(final byte[] bytes) {
            if (bytes == null) {
                buffer(Integer.BYTES).putInt(NULL_LENGTH);
            } else {
                buffer(Integer.BYTES + bytes.length).putInt(bytes.length).put(bytes);
            }
        }

        void string(final String string) {
            bytes(string == null ? null : string.getBytes(StandardCharsets.UTF_8));
        }

        void partition(final TopicPartition partition) {
            string(partition.topic());
            buffer(Integer.BYTES).putInt(partition.partition());
        }

        void headers(final Headers headers) {
            final Header[] all = headers == null ? NO_HEADERS : headers.toArray();
            buffer(Integer.BYTES).putInt(all.length);
            for (final Header header : all) {
                string(header.key());
                bytes(header.value());
            }
        }

        byte[] toBytes() {
            final byte[] bytes = new byte[buffer.position()];
            buffer.flip();
            buffer.get(bytes);
            return bytes;
        }
    }
}
