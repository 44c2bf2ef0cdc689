package dev.sluice.compat.faults;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The bad-records scenario's input, fixed by its size: record {@code i} has key {@code k<i mod 7>}
 * and the integer {@code i + 1}, except that every tenth (from the eighth) is three bytes no integer
 * deserializer takes, and every fifteenth (from the fifth) of the others has no key; and a label per
 * key but one ({@code k<i>} is {@code L<i>}, {@code k6} has none). What the application must then write
 * is worked out here.
 */
final class BadInput {

    /** Echoes of values that are multiples of this are larger than a producer may send, when a run asks for it. */
    static final int OVERSIZED_EVERY = 50;

    // Prime to the ten that spaces the undeserialisable records, so that they fall on every key.
    private static final int KEYS = 7;
    private static final byte[] UNDESERIALISABLE = "bad".getBytes(StandardCharsets.UTF_8);

    private final int size;

    BadInput(final int size) {
        this.size = size;
    }

    static boolean oversized(final int value) {
        return value % OVERSIZED_EVERY == 0;
    }

    /** What a left join writes for a record whose key has no label (or that has no key). */
    static final String NO_LABEL = "none";

    void writeLabels(final String bootstrapServers, final String topic) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.ACKS_CONFIG, "all"), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int k = 0; k < KEYS; k++) {
                final String key = "k" + k;
                if (label(key) != null) {
                    producer.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
                        label(key).getBytes(StandardCharsets.UTF_8)));
                }
            }
            producer.flush();
        }
    }

    /** The label of {@code key}: {@code L<i>} for {@code k<i>}, none for the last key. */
    static String label(final String key) {
        return key == null || key.equals("k" + (KEYS - 1)) ? null : "L" + key.substring(1);
    }

    void write(final String bootstrapServers, final String topic) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.ACKS_CONFIG, "all"), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < size; i++) {
                final byte[] key = keyless(i) ? null : key(i).getBytes(StandardCharsets.UTF_8);
                final byte[] value = undeserialisable(i) ? UNDESERIALISABLE : ByteBuffer.allocate(Integer.BYTES).putInt(value(i)).array();
                producer.send(new ProducerRecord<>(topic, key, value));
            }
            producer.flush();
        }
    }

    /** Each key's running sum over the records an aggregation keeps: those with a key and an integer. */
    Map<String, List<Long>> sums() {
        final Map<String, List<Long>> sums = new LinkedHashMap<>();
        final Map<String, Long> running = new LinkedHashMap<>();
        for (int i = 0; i < size; i++) {
            if (!undeserialisable(i) && !keyless(i)) {
                final long sum = running.merge(key(i), (long) value(i), Long::sum);
                sums.computeIfAbsent(key(i), key -> new ArrayList<>()).add(sum);
            }
        }
        return sums;
    }

    /** The echoes of every record with an integer, keyed or not, in ascending order; without the oversized ones if asked. */
    List<String> echoes(final boolean withoutOversized) {
        final List<String> echoes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            if (!undeserialisable(i) && !(withoutOversized && oversized(value(i)))) {
                echoes.add(Integer.toString(value(i)));
            }
        }
        return echoes;
    }

    /**
     * The inner join of every record with an integer and a key whose label there is: {@code <label>:<value>},
     * in ascending order of values.
     */
    List<String> joined() {
        final List<String> joined = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            if (!undeserialisable(i) && !keyless(i) && label(key(i)) != null) {
                joined.add(label(key(i)) + ":" + value(i));
            }
        }
        return joined;
    }

    /**
     * The left join of every record with an integer, keyed or not (Kafka Streams joins records without a
     * key too, since KIP-962): {@code <label or none>:<value>}, in ascending order of values.
     */
    List<String> leftJoined() {
        final List<String> joined = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            if (!undeserialisable(i)) {
                final String label = keyless(i) ? null : label(key(i));
                joined.add((label == null ? NO_LABEL : label) + ":" + value(i));
            }
        }
        return joined;
    }

    /**
     * The records Kafka Streams drops on the way when its handlers continue: those no deserializer takes,
     * those without a key at the aggregation and again at the inner join, and the oversized echoes if
     * there are any.
     */
    int droppedRecords(final boolean oversizedEchoes) {
        return count(BadInput::undeserialisable)
            + 2 * count(i -> !undeserialisable(i) && keyless(i))
            + (oversizedEchoes ? count(i -> !undeserialisable(i) && oversized(value(i))) : 0);
    }

    private int count(final IntPredicate which) {
        int count = 0;
        for (int i = 0; i < size; i++) {
            if (which.test(i)) {
                count++;
            }
        }
        return count;
    }

    private static boolean undeserialisable(final int i) {
        return i % 10 == 7;
    }

    private static boolean keyless(final int i) {
        return i % 15 == 4;
    }

    private static String key(final int i) {
        return "k" + i % KEYS;
    }

    private static int value(final int i) {
        return i + 1;
    }
}
