package dev.sluice.compat.parity;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** A topic as a read_committed consumer sees it. */
final class CommittedOutput {

    private static final Duration POLL = Duration.ofMillis(200);

    private CommittedOutput() {
    }

    static KafkaConsumer<byte[], byte[]> consumer(final String bootstrapServers) {
        return consumer(bootstrapServers, IsolationLevel.READ_COMMITTED);
    }

    /**
     * A consumer that sees records of open transactions too: its end offsets are the high watermarks,
     * where a read_committed consumer's are the last stable offsets.
     */
    static KafkaConsumer<byte[], byte[]> uncommittedConsumer(final String bootstrapServers) {
        return consumer(bootstrapServers, IsolationLevel.READ_UNCOMMITTED);
    }

    private static KafkaConsumer<byte[], byte[]> consumer(final String bootstrapServers, final IsolationLevel isolationLevel) {
        return new KafkaConsumer<>(Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolationLevel.toString(),
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    static List<TopicPartition> partitions(final KafkaConsumer<?, ?> consumer, final String topic) {
        return consumer.partitionsFor(topic).stream().map(info -> new TopicPartition(topic, info.partition())).toList();
    }

    /** Every committed record of {@code topic}, partition by partition, each in offset order. */
    static List<OutputRecord> read(final String bootstrapServers, final String topic) {
        final List<OutputRecord> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrapServers)) {
            final List<TopicPartition> partitions = partitions(consumer, topic);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            // Under read_committed the end offsets are the last stable offsets.
            final Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            while (partitions.stream().anyMatch(partition -> consumer.position(partition) < ends.get(partition))) {
                for (final ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
                    records.add(new OutputRecord(record.key(), record.value(), record.timestamp(), record.partition(), record.offset()));
                }
            }
        }
        return records;
    }
}
