package dev.sluice.streams.runtime.internals;

import dev.sluice.streams.internals.OffsetFraming;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
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
 *       lets the engine's producer choose it from the key. They go to the engine in arrays the task reuses,
 *       after an {@code int} saying how many bytes the batch takes across them
 *       ({@link ProducedRecords#drain}); the engine copies them as the call returns, so a batch leaves no
 *       garbage.</li>
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
    private static final byte[][] EMPTY_RECORDS = {ByteBuffer.allocate(2 * Integer.BYTES).putInt(Integer.BYTES).array()};
    /** Where a drained batch's first record starts: after the batch's length and its count of records. */
    private static final int BATCH_START = 2 * Integer.BYTES;

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
        return drainedBatch(out.drain());
    }

    /** The records of a batch {@link ProducedRecords#drain} returned. */
    static List<ProducerRecord<byte[], byte[]>> readDrainedRecords(final byte[][] drained) {
        return readProducedRecords(drainedBatch(drained));
    }

    /** The bytes of a drained batch, as the engine reads them across the chunks. */
    private static byte[] drainedBatch(final byte[][] drained) {
        final byte[] batch = new byte[ByteBuffer.wrap(drained[0]).getInt()];
        int read = 0;
        for (int chunk = 0; read < batch.length; chunk++) {
            final int from = chunk == 0 ? Integer.BYTES : 0;
            final int part = Math.min(batch.length - read, drained[chunk].length - from);
            System.arraycopy(drained[chunk], from, batch, read, part);
            read += part;
        }
        return batch;
    }

    /** The records of a batch framed as the engine frames those it hands back. */
    static List<ProducerRecord<byte[], byte[]>> readProducedRecords(final byte[] framed) {
        final ByteBuffer in = ByteBuffer.wrap(framed);
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
    static byte[][] emptyRecords() {
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
     * Produced records framed as they are added, so that a batch costs no copy of the records and their
     * headers, into arrays of {@value #CHUNK_BYTES} bytes reused from batch to batch, which the engine reads the
     * batch across ({@link #drain}). Chunks rather than one growing array: an array of half of G1's smallest
     * region or more is humongous and takes whole regions of its own, and a growing one leaves each size it
     * outgrew behind. A burst's chunks beyond {@value #RETAINED_CHUNKS} are dropped once it is drained.
     */
    static final class ProducedRecords {
        private static final int CHUNK_BYTES = 64 << 10;
        private static final int RETAINED_CHUNKS = 4;

        private final List<byte[]> chunks = new ArrayList<>(List.of(new byte[CHUNK_BYTES]));
        // Topic names are few and come back as the same strings: each is encoded once.
        private final Map<String, byte[]> topics = new HashMap<>();
        private final ByteBuffer scratch = ByteBuffer.allocate(Long.BYTES);
        /** What {@link #drain} returns: the chunks, in an array made again only when they change. */
        private byte[][] drained;
        /** The chunk being written to, and where in it. */
        private int chunk;
        private int position = BATCH_START;
        /** The bytes of the batch so far, from its count of records on. */
        private int length = BATCH_START - Integer.BYTES;
        private int count;

        void add(final ProducerRecord<byte[], byte[]> record) {
            bytes(topics.computeIfAbsent(record.topic(), t -> t.getBytes(StandardCharsets.UTF_8)));
            putInt(record.partition() == null ? ANY_PARTITION : record.partition());
            // Kafka Streams always stamps what it sends; a missing timestamp is the producer's to set.
            putLong(record.timestamp() == null ? NO_OFFSET : record.timestamp());
            bytes(record.key());
            bytes(record.value());
            final Header[] headers = record.headers() == null ? NO_HEADERS : record.headers().toArray();
            putInt(headers.length);
            for (final Header header : headers) {
                bytes(header.key() == null ? null : header.key().getBytes(StandardCharsets.UTF_8));
                bytes(header.value());
            }
            count++;
        }

        /**
         * The records added since the last call, framed across the returned arrays, which stay as they are
         * until the next record is added: the first {@code int} of the first says how many bytes after it the
         * batch takes, continuing into the next arrays in turn; none are kept.
         */
        byte[][] drain() {
            if (count == 0) {
                return emptyRecords();
            }
            ByteBuffer.wrap(chunks.get(0)).putInt(length).putInt(count);
            if (drained == null) {
                drained = chunks.toArray(new byte[0][]);
            }
            final byte[][] batch = drained;
            clear();
            return batch;
        }

        /** Forgets the records added since the last drain. */
        void clear() {
            if (chunks.size() > RETAINED_CHUNKS) {
                chunks.subList(RETAINED_CHUNKS, chunks.size()).clear();
                drained = null;
            }
            // The length and count are written as a batch is drained; the bytes of the last batch stay as
            // they are until the next record is added, after the engine took them.
            chunk = 0;
            position = BATCH_START;
            length = BATCH_START - Integer.BYTES;
            count = 0;
        }

        private void bytes(final byte[] bytes) {
            if (bytes == null) {
                putInt(NULL_LENGTH);
            } else {
                putInt(bytes.length);
                write(bytes, bytes.length);
            }
        }

        private void putInt(final int value) {
            write(scratch.putInt(0, value).array(), Integer.BYTES);
        }

        private void putLong(final long value) {
            write(scratch.putLong(0, value).array(), Long.BYTES);
        }

        /** Appends the first {@code size} bytes of {@code bytes}, into as many chunks as they need. */
        private void write(final byte[] bytes, final int size) {
            int written = 0;
            while (written < size) {
                if (position == CHUNK_BYTES) {
                    chunk++;
                    position = 0;
                    if (chunk == chunks.size()) {
                        chunks.add(new byte[CHUNK_BYTES]);
                        drained = null;
                    }
                }
                final int part = Math.min(size - written, CHUNK_BYTES - position);
                System.arraycopy(bytes, written, chunks.get(chunk), position, part);
                position += part;
                written += part;
            }
            length += size;
        }
    }

    /** A growing big-endian buffer on the heap. */
    private static final class Writer {
        static final int INITIAL_BYTES = 256;
        private ByteBuffer buffer;

        Writer() {
            buffer = ByteBuffer.allocate(INITIAL_BYTES);
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
