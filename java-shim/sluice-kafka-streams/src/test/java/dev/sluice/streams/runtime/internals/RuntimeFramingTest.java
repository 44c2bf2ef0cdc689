package dev.sluice.streams.runtime.internals;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

class RuntimeFramingTest {

    @Test
    void propertiesRoundTripWithUnicodeAndEmptyValues() {
        final Map<String, String> properties = new LinkedHashMap<>();
        properties.put("application.id", "wörd-count");
        properties.put("empty", "");
        assertEquals(properties, RuntimeFraming.readProperties(RuntimeFraming.properties(properties)));
        assertEquals(Map.of(), RuntimeFraming.readProperties(RuntimeFraming.properties(Map.of())));
    }

    @Test
    void propertiesAreLengthPrefixedBigEndian() {
        final ByteBuffer framed = ByteBuffer.wrap(RuntimeFraming.properties(Map.of("k", "vv")));
        assertEquals(1, framed.getInt());
        assertEquals('k', framed.get());
        assertEquals(2, framed.getInt());
        assertEquals('v', framed.get());
        assertEquals('v', framed.get());
        assertEquals(0, framed.remaining());
    }

    @Test
    void inputsRoundTripWithAndWithoutCommittedOffsetAndMetadata() {
        final Map<TopicPartition, OffsetAndMetadata> inputs = new LinkedHashMap<>();
        inputs.put(new TopicPartition("input", 0), new OffsetAndMetadata(17L, Optional.empty(), "AgAAAAAAAAPo"));
        inputs.put(new TopicPartition("app-x-repartition", 0), null);
        inputs.put(new TopicPartition("input2", 0), new OffsetAndMetadata(5L, Optional.empty(), ""));
        final Map<TopicPartition, OffsetAndMetadata> read = RuntimeFraming.readInputs(RuntimeFraming.inputs(inputs));
        assertEquals(inputs.keySet(), read.keySet());
        assertEquals(17L, read.get(new TopicPartition("input", 0)).offset());
        assertEquals("AgAAAAAAAAPo", read.get(new TopicPartition("input", 0)).metadata());
        assertNull(read.get(new TopicPartition("app-x-repartition", 0)));
        assertEquals(5L, read.get(new TopicPartition("input2", 0)).offset());
        assertEquals("", read.get(new TopicPartition("input2", 0)).metadata());
    }

    @Test
    void inputWithoutMetadataIsFramedAsNullLength() {
        final ByteBuffer framed = ByteBuffer.wrap(RuntimeFraming.inputs(
            Map.of(new TopicPartition("t", 2), new OffsetAndMetadata(9L))));
        assertEquals(1, framed.getInt());
        framed.get();
        assertEquals(2, framed.getInt());
        assertEquals(9L, framed.getLong());
        assertEquals(-1, framed.getInt());
        assertEquals(0, framed.remaining());
    }

    @Test
    void consumedRecordsRoundTripWithNullsAndHeaders() {
        final RecordHeaders headers = new RecordHeaders();
        headers.add("trace", "abc".getBytes(StandardCharsets.UTF_8));
        headers.add("nothing", null);
        headers.add("empty", new byte[0]);
        final List<ConsumerRecord<byte[], byte[]>> records = List.of(
            consumed("input", 0, 10L, 1_000L, bytes("k"), bytes("v"), headers),
            consumed("input", 0, 11L, 1_001L, null, bytes("tombstone-less"), new RecordHeaders()),
            consumed("input", 1, 3L, -1L, bytes(""), null, new RecordHeaders()));
        final Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> byPartition =
            RuntimeFraming.readConsumedRecords(RuntimeFraming.consumedRecords(records));
        assertEquals(List.of(new TopicPartition("input", 0), new TopicPartition("input", 1)),
            List.copyOf(byPartition.keySet()));
        final List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
        byPartition.values().forEach(read::addAll);
        assertEquals(records.size(), read.size());
        assertSame(read.get(0).topic(), read.get(1).topic());
        for (int i = 0; i < records.size(); i++) {
            final ConsumerRecord<byte[], byte[]> expected = records.get(i);
            final ConsumerRecord<byte[], byte[]> actual = read.get(i);
            assertEquals(expected.topic(), actual.topic());
            assertEquals(expected.partition(), actual.partition());
            assertEquals(expected.offset(), actual.offset());
            assertEquals(expected.timestamp(), actual.timestamp());
            assertEquals(TimestampType.CREATE_TIME, actual.timestampType());
            assertArrayEquals(expected.key(), actual.key());
            assertArrayEquals(expected.value(), actual.value());
            assertHeaders(expected.headers().toArray(), actual.headers().toArray());
        }
        assertEquals(Map.of(), RuntimeFraming.readConsumedRecords(RuntimeFraming.consumedRecords(List.of())));
    }

    @Test
    void producedRecordsRoundTripWithAnyPartitionNullsAndHeaders() {
        final RecordHeaders headers = new RecordHeaders();
        headers.add("h", bytes("1"));
        headers.add("n", null);
        final List<ProducerRecord<byte[], byte[]>> records = List.of(
            new ProducerRecord<>("output", null, 5L, bytes("word"), bytes("3"), headers),
            new ProducerRecord<>("app-counts-changelog", 2, 6L, bytes("word"), null, new RecordHeaders()),
            new ProducerRecord<>("output", 0, 7L, null, bytes(""), new RecordHeaders()));
        final List<ProducerRecord<byte[], byte[]>> read =
            RuntimeFraming.readProducedRecords(RuntimeFraming.producedRecords(records));
        assertEquals(records.size(), read.size());
        for (int i = 0; i < records.size(); i++) {
            final ProducerRecord<byte[], byte[]> expected = records.get(i);
            final ProducerRecord<byte[], byte[]> actual = read.get(i);
            assertEquals(expected.topic(), actual.topic());
            assertEquals(expected.partition(), actual.partition());
            assertEquals(expected.timestamp(), actual.timestamp());
            assertArrayEquals(expected.key(), actual.key());
            assertArrayEquals(expected.value(), actual.value());
            assertHeaders(expected.headers().toArray(), actual.headers().toArray());
        }
    }

    @Test
    void producedRecordWithAnyPartitionIsFramedAsMinusOne() {
        final ByteBuffer framed = ByteBuffer.wrap(RuntimeFraming.producedRecords(
            List.of(new ProducerRecord<>("t", null, 42L, null, null, new RecordHeaders()))));
        assertEquals(1, framed.getInt());
        assertEquals(1, framed.getInt());
        framed.get();
        assertEquals(-1, framed.getInt());
        assertEquals(42L, framed.getLong());
        assertEquals(-1, framed.getInt());
        assertEquals(-1, framed.getInt());
        assertEquals(0, framed.getInt());
        assertEquals(0, framed.remaining());
    }

    @Test
    void emptyBatchIsACountOfZero() {
        assertArrayEquals(new byte[4], RuntimeFraming.producedRecords(List.of()));
        assertArrayEquals(new byte[][] {{0, 0, 0, 4, 0, 0, 0, 0}}, RuntimeFraming.emptyRecords(),
            "the length of the batch, then its count of records");
        assertEquals(List.of(), RuntimeFraming.readDrainedRecords(RuntimeFraming.emptyRecords()));
    }

    @Test
    void producedRecordsAreFramedWhenAddedAndEachDrainHoldsOnlyItsOwn() {
        final RuntimeFraming.ProducedRecords produced = new RuntimeFraming.ProducedRecords();
        final RecordHeaders headers = new RecordHeaders();
        headers.add("h", bytes("before"));
        produced.add(new ProducerRecord<>("a", 0, 1L, bytes("k1"), bytes("v1"), headers));
        // What a processor does to the headers after the send is not what was sent.
        headers.add("later", bytes("x"));
        final List<ProducerRecord<byte[], byte[]>> first = RuntimeFraming.readDrainedRecords(produced.drain());
        assertEquals(1, first.size());
        assertHeaders(new RecordHeaders().add("h", bytes("before")).toArray(), first.get(0).headers().toArray());

        assertArrayEquals(RuntimeFraming.emptyRecords(), produced.drain());
        produced.add(new ProducerRecord<>("b", null, 2L, bytes("k2"), bytes("v2"), new RecordHeaders()));
        produced.add(new ProducerRecord<>("a", 1, 3L, null, null, new RecordHeaders()));
        final List<ProducerRecord<byte[], byte[]>> second = RuntimeFraming.readDrainedRecords(produced.drain());
        assertEquals(List.of("b", "a"), List.of(second.get(0).topic(), second.get(1).topic()));
        assertNull(second.get(0).partition());
        assertEquals(1, second.get(1).partition());

        produced.add(new ProducerRecord<>("a", 0, 4L, bytes("dropped"), new byte[2 << 20]));
        produced.clear();
        produced.add(new ProducerRecord<>("a", 0, 5L, bytes("kept"), bytes("v")));
        final List<ProducerRecord<byte[], byte[]>> third = RuntimeFraming.readDrainedRecords(produced.drain());
        assertEquals(1, third.size());
        assertArrayEquals(bytes("kept"), third.get(0).key());
    }

    @Test
    void aLargeBatchSpansChunksOfWhichTheFirstFewAreKept() {
        final byte[] big = new byte[100_000];
        big[99_999] = 7;
        final RuntimeFraming.ProducedRecords produced = new RuntimeFraming.ProducedRecords();
        produced.add(new ProducerRecord<>("t", 0, 1L, big, big));
        produced.add(new ProducerRecord<>("t", 0, 2L, big, (byte[]) null));
        final byte[][] drained = produced.drain();
        final int length = ByteBuffer.wrap(drained[0]).getInt();
        // The count; per record its topic, partition, timestamp, key and headers; the one value.
        assertEquals(4 + 2 * (4 + 1 + 4 + 8 + 4 + 100_000 + 4) + (4 + 100_000) + 4, length);
        assertEquals(5, drained.length, "the length and the batch in chunks of 64 KiB");
        assertTrue(Arrays.stream(drained).allMatch(chunk -> chunk.length == 64 << 10));
        final List<ProducerRecord<byte[], byte[]>> read = RuntimeFraming.readDrainedRecords(drained);
        assertEquals(2, read.size());
        assertArrayEquals(big, read.get(0).key());
        assertArrayEquals(big, read.get(1).key());
        assertArrayEquals(big, read.get(0).value());
        assertNull(read.get(1).value());

        produced.add(new ProducerRecord<>("t", 0, 3L, bytes("k"), bytes("v")));
        final byte[][] next = produced.drain();
        assertEquals(4, next.length, "a burst's chunks past the fourth are dropped once it is drained");
        assertArrayEquals(bytes("v"), RuntimeFraming.readDrainedRecords(next).get(0).value());

        // A burst as large again takes new chunks past the fourth: the batch is read from those.
        final byte[] other = new byte[100_000];
        Arrays.fill(other, (byte) 3);
        produced.add(new ProducerRecord<>("t", 0, 4L, other, other));
        produced.add(new ProducerRecord<>("t", 0, 5L, other, other));
        final List<ProducerRecord<byte[], byte[]>> again = RuntimeFraming.readDrainedRecords(produced.drain());
        assertArrayEquals(other, again.get(1).key());
        assertArrayEquals(other, again.get(1).value());
    }

    private static void assertHeaders(final Header[] expected, final Header[] actual) {
        assertEquals(expected.length, actual.length);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i].key(), actual[i].key());
            assertArrayEquals(expected[i].value(), actual[i].value());
        }
    }

    private static ConsumerRecord<byte[], byte[]> consumed(final String topic, final int partition, final long offset,
                                                           final long timestamp, final byte[] key, final byte[] value,
                                                           final RecordHeaders headers) {
        return new ConsumerRecord<>(topic, partition, offset, timestamp, TimestampType.CREATE_TIME,
            key == null ? -1 : key.length, value == null ? -1 : value.length, key, value, headers, Optional.empty());
    }

    private static byte[] bytes(final String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
