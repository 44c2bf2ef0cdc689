package dev.sluice.streams.testing.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class TransactionsSmokeTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final String TOPIC = "transactions-smoke";
    private static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

    @Test
    void readCommittedSeesCommittedTransactionsOnlyAndReadUncommittedSeesAll() {
        BROKER.createTopic(TOPIC, 1);
        try (KafkaProducer<String, String> producer = transactionalProducer()) {
            producer.initTransactions();
            writeInTransaction(producer, "committed-1");
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, "key", "aborted"));
            producer.flush();
            producer.abortTransaction();
            writeInTransaction(producer, "committed-2");
        }

        assertEquals(List.of("committed-1", "committed-2"), readAll("read_committed"));
        // The aborted record did reach the log: only the isolation level hides it.
        assertEquals(List.of("committed-1", "aborted", "committed-2"), readAll("read_uncommitted"));
    }

    private static void writeInTransaction(KafkaProducer<String, String> producer, String value) {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(TOPIC, "key", value));
        producer.commitTransaction();
    }

    private static KafkaProducer<String, String> transactionalProducer() {
        return new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "transactions-smoke-producer",
                ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000),
                new StringSerializer(), new StringSerializer());
    }

    /** Every record up to the end of the partition as the isolation level sees it. */
    private static List<String> readAll(String isolationLevel) {
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolationLevel,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(Set.of(PARTITION));
            long end = consumer.endOffsets(Set.of(PARTITION)).get(PARTITION);
            List<String> values = new ArrayList<>();
            long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
            while (consumer.position(PARTITION) < end) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("did not reach offset " + end + " within " + READ_TIMEOUT + "; read " + values);
                }
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
            }
            return values;
        }
    }
}
