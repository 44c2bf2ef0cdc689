package dev.sluice.streams.differential;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.query.KeyQuery;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Interactive queries (IQv2) at both isolation levels against a running exactly-once application on
 * Sluice's stores: between commits, a processed record is visible to READ_UNCOMMITTED and not to
 * READ_COMMITTED; once the commit interval has passed and the transaction committed, to both.
 */
class InteractiveQueryIsolationTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final String INPUT = "iq-input";
    private static final String STORE = "iq-counts";
    static final Duration COMMIT_INTERVAL = Duration.ofSeconds(8);

    @TempDir
    Path stateDir;

    /**
     * Kafka Streams 4.4 commits its stores during processing under exactly-once only when
     * {@code enable.transactional.statestores} is true (otherwise only when a task closes), so that
     * is how an application on Apache's runtime gets READ_COMMITTED that advances with each commit.
     */
    @Test
    void readCommittedSeesAProcessedRecordOnlyAfterItsCommit() throws InterruptedException {
        final Properties props = BrokerRun.exactlyOnceProps(BROKER.bootstrapServers(), "iq-isolation", stateDir);
        props.put(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG, true);
        assertIsolationLevelsDifferUntilTheCommit(BROKER, props);
    }

    static void assertIsolationLevelsDifferUntilTheCommit(final LocalKafkaBroker broker, final Properties props)
            throws InterruptedException {
        try (KafkaStreams streams = startCounting(broker, props)) {
            final long produced = produceOneRecord(broker);
            awaitCount(streams, IsolationLevel.READ_UNCOMMITTED, Duration.ofSeconds(30));
            final Long committedWhileUncommittedSeen = count(streams, IsolationLevel.READ_COMMITTED);
            final long processedAfterMs = Duration.ofNanos(System.nanoTime() - produced).toMillis();
            assertNull(committedWhileUncommittedSeen,
                "READ_COMMITTED saw the count " + processedAfterMs + " ms after the record was produced, before its commit");

            awaitCount(streams, IsolationLevel.READ_COMMITTED, COMMIT_INTERVAL.multipliedBy(3));
            final long committedAfterMs = Duration.ofNanos(System.nanoTime() - produced).toMillis();
            assertEquals(1L, count(streams, IsolationLevel.READ_UNCOMMITTED));
            System.out.printf("isolation: %d ms after the record was produced READ_UNCOMMITTED saw it and READ_COMMITTED did not;"
                + " READ_COMMITTED saw it after %d ms (commit interval %d ms)%n",
                processedAfterMs, committedAfterMs, COMMIT_INTERVAL.toMillis());
        }
    }

    /** Starts a count of {@link #INPUT} by key into {@link #STORE} on Sluice's stores, committing every {@link #COMMIT_INTERVAL}. */
    static KafkaStreams startCounting(final LocalKafkaBroker broker, final Properties props) throws InterruptedException {
        broker.createTopic(INPUT, 1);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, COMMIT_INTERVAL.toMillis());
        // Without a cache the count's write reaches the store as the record is processed.
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        StoreStack.SLUICE.configure(props);
        final App app = App.dsl(builder -> builder.stream(INPUT, Consumed.with(Serdes.String(), Serdes.String()))
            .groupByKey()
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as(STORE)));
        final KafkaStreams streams = new KafkaStreams(app.build(new StreamsConfig(props), StoreStack.SLUICE), props);
        try {
            BrokerRun.startAndAwaitRunning(streams);
            assertTrue(StoreImplementationQuery.bottomStoreClass(streams, STORE).startsWith("dev.sluice."));
            return streams;
        } catch (final RuntimeException | InterruptedException | AssertionError e) {
            streams.close();
            throw e;
        }
    }

    /** Produces the record whose count the queries look for; returns when, in {@link System#nanoTime()}. */
    static long produceOneRecord(final LocalKafkaBroker broker) {
        BrokerRun.produce(broker.bootstrapServers(), new InputScript().pipe(INPUT, "gate", "opened", 1_000));
        return System.nanoTime();
    }

    static void awaitCount(final KafkaStreams streams, final IsolationLevel isolation, final Duration timeout)
            throws InterruptedException {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (count(streams, isolation) == null) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(isolation + " did not see the count within " + timeout);
            }
            Thread.sleep(10);
        }
        assertEquals(1L, count(streams, isolation));
    }

    static Long count(final KafkaStreams streams, final IsolationLevel isolation) {
        final QueryResult<Long> result = streams.query(StateQueryRequest.inStore(STORE)
                .withQuery(KeyQuery.<String, Long>withKey("gate"))
                .withIsolationLevel(isolation))
            .getPartitionResults()
            .get(0);
        if (result == null || result.isFailure()) {
            throw new AssertionError(isolation + " query on partition 0 failed: " + result);
        }
        return result.getResult();
    }
}
