package dev.sluice.compat.faults;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Reads a whole topic as a read_committed consumer sees it: each key's values in offset order, or all its values. */
final class CommittedTopic {

    private static final Duration POLL = Duration.ofMillis(200);

    private CommittedTopic() {
    }

    static Map<String, List<Long>> read(final String bootstrapServers, final String topic, final Function<byte[], Long> value) {
        final Map<String, List<Long>> valuesByKey = new LinkedHashMap<>();
        forEach(bootstrapServers, topic,
            record -> valuesByKey.computeIfAbsent(new String(record.key()), key -> new ArrayList<>()).add(value.apply(record.value())));
        return valuesByKey;
    }

    /** Every value of the topic, keyed or not, partition by partition in offset order. */
    static <V> List<V> values(final String bootstrapServers, final String topic, final Function<byte[], V> value) {
        final List<V> values = new ArrayList<>();
        forEach(bootstrapServers, topic, record -> values.add(value.apply(record.value())));
        return values;
    }

    private static void forEach(final String bootstrapServers, final String topic, final Consumer<ConsumerRecord<byte[], byte[]>> action) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            final List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                .map(info -> new TopicPartition(topic, info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            // Under read_committed the end offsets are the last stable offsets.
            final Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            while (partitions.stream().anyMatch(partition -> consumer.position(partition) < ends.get(partition))) {
                consumer.poll(POLL).forEach(action);
            }
        }
    }

    static Long intValue(final byte[] bytes) {
        return (long) ByteBuffer.wrap(bytes).getInt();
    }

    static Long longValue(final byte[] bytes) {
        return ByteBuffer.wrap(bytes).getLong();
    }
}
