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
 * deserializer takes, and every fifteenth (from the fifth) of the others has no key. What the
 * application must then write is worked out here.
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
     * The records Kafka Streams drops on the way when its handlers continue: those no deserializer takes,
     * those without a key at the aggregation, and the oversized echoes if there are any.
     */
    int droppedRecords(final boolean oversizedEchoes) {
        return count(BadInput::undeserialisable)
            + count(i -> !undeserialisable(i) && keyless(i))
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
