package dev.sluice.compat.faults;

import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.IntegerSerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes keyed random integers at an even pace, so that input keeps arriving while the application
 * is killed and restarted. What it wrote is read back from the topic by the verifier, not remembered.
 */
final class InputDriver implements Runnable {

    private final String bootstrapServers;
    private final String topic;
    private final int keys;
    private final int records;
    private final Duration duration;
    private final Random random;

    InputDriver(final String bootstrapServers, final String topic, final int keys, final int records, final Duration duration, final long seed) {
        this.bootstrapServers = bootstrapServers;
        this.topic = topic;
        this.keys = keys;
        this.records = records;
        this.duration = duration;
        this.random = new Random(seed);
    }

    @Override
    public void run() {
        final long pauseNanos = duration.toNanos() / records;
        final long started = System.nanoTime();
        try (KafkaProducer<String, Integer> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new IntegerSerializer())) {
            for (int i = 0; i < records; i++) {
                final String key = String.format("k%02d", random.nextInt(keys));
                producer.send(new ProducerRecord<>(topic, key, random.nextInt(20_001) - 10_000));
                final long dueNanos = started + (i + 1) * pauseNanos;
                final long aheadNanos = dueNanos - System.nanoTime();
                if (aheadNanos > 0) {
                    Thread.sleep(aheadNanos / 1_000_000, (int) (aheadNanos % 1_000_000));
                }
            }
            producer.flush();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
