package dev.sluice.streams.differential;

import static dev.sluice.streams.differential.InteractiveQueryIsolationTest.COMMIT_INTERVAL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka Streams 4.4's runtime under exactly-once with {@code enable.transactional.statestores} at its
 * default (false) commits stores only when a task closes. Sluice's stores then run non-transactionally,
 * as Kafka Streams' own do: a READ_COMMITTED query sees a processed record at once, without waiting for
 * a commit that would never reach the store.
 */
class ReadCommittedWithDefaultTransactionalFlagTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    @TempDir
    Path stateDir;

    @Test
    void readCommittedSeesAProcessedRecordWithoutWaitingForACommit() throws InterruptedException {
        final Properties props = BrokerRun.exactlyOnceProps(BROKER.bootstrapServers(), "iq-isolation-default-flag", stateDir);
        try (KafkaStreams streams = InteractiveQueryIsolationTest.startCounting(BROKER, props)) {
            final long produced = InteractiveQueryIsolationTest.produceOneRecord(BROKER);
            InteractiveQueryIsolationTest.awaitCount(streams, IsolationLevel.READ_UNCOMMITTED, Duration.ofSeconds(30));
            final long processed = System.nanoTime();
            InteractiveQueryIsolationTest.awaitCount(streams, IsolationLevel.READ_COMMITTED, COMMIT_INTERVAL.multipliedBy(3));
            final long committedLagMs = Duration.ofNanos(System.nanoTime() - processed).toMillis();
            assertTrue(committedLagMs < COMMIT_INTERVAL.toMillis() / 4,
                "READ_COMMITTED saw the count " + committedLagMs + " ms after READ_UNCOMMITTED: it waited for a commit");
            assertEquals(1L, InteractiveQueryIsolationTest.count(streams, IsolationLevel.READ_UNCOMMITTED));
            System.out.printf("default transactional flag: READ_COMMITTED saw the count %d ms after READ_UNCOMMITTED, "
                + "%d ms after it was produced (commit interval %d ms)%n", committedLagMs,
                Duration.ofNanos(System.nanoTime() - produced).toMillis(), COMMIT_INTERVAL.toMillis());
        }
    }
}
