package dev.sluice.streams.runtime.internals;

import static dev.sluice.streams.runtime.internals.TaskRunnerFixture.batch;
import static dev.sluice.streams.runtime.internals.TaskRunnerFixture.produced;
import static dev.sluice.streams.runtime.internals.TaskRunnerFixture.record;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.internals.OffsetFraming;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.Test;

/**
 * The record cache is split between the live threads as Kafka Streams splits it, and the shares follow
 * engine threads as they are added and removed.
 */
class ThreadSharesTest {

    /** Counts per key; with a global table, Kafka Streams' global thread takes a share too. */
    private static Supplier<Topology> count(final boolean withGlobalTable) {
        return () -> {
            final StreamsBuilder builder = new StreamsBuilder();
            builder.stream("input", Consumed.with(Serdes.String(), Serdes.String()))
                .groupByKey()
                .count(Materialized.as("counts"))
                .toStream()
                .to("output", Produced.with(Serdes.String(), Serdes.Long()));
            if (withGlobalTable) {
                builder.globalTable("global-input", Consumed.with(Serdes.String(), Serdes.String()));
            }
            return builder.build();
        };
    }

    private static Properties cache(final long cacheBytes, final int threads) {
        final Properties properties = new Properties();
        properties.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, cacheBytes);
        properties.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        return properties;
    }

    @Test
    void cacheSharesFollowTheLiveThreadsAndCountTheGlobalThread() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(count(false), cache(120_000, 2))) {
            final TaskEnvironment environment = fixture.environment();
            assertEquals(60_000, environment.cacheBytesPerThread());
            environment.threadAdded("app-StreamThread-3");
            assertEquals(40_000, environment.cacheBytesPerThread());
            // A thread asked to stop gives its share up at once, before it has ended.
            environment.threadStopping();
            assertEquals(60_000, environment.cacheBytesPerThread());
            environment.threadStopping();
            environment.threadGone("app-StreamThread-2");
            assertEquals(120_000, environment.cacheBytesPerThread());
        }
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(count(true), cache(120_000, 2))) {
            assertEquals(40_000, fixture.environment().cacheBytesPerThread(), "the global thread has a share");
            assertEquals(40_000, fixture.environment().globalCacheBytes());
        }
    }

    @Test
    void aThreadWhoseShareShrinksEvictsFromItsCacheAtItsNextLoopTurn() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(count(false), cache(120_000, 2))) {
            final TaskEnvironment environment = fixture.environment();
            final TaskRunner task = fixture.running(0, 0);
            final List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
            for (int i = 0; i < 150; i++) {
                records.add(record("input", 0, i, 1_000L + i, bytes("key-" + i), bytes("v")));
            }
            assertEquals(List.of(), produced(task.process(batch(records))), "60 000 bytes hold every count");

            for (int added = 0; added < 18; added++) {
                environment.threadAdded("app-StreamThread-" + (3 + added));
            }
            assertEquals(6_000, environment.cacheBytesPerThread());
            assertEquals(List.of(), produced(task.punctuate()), "the cache takes its new share at its thread's loop turn");
            environment.loopTurned(0, 0, 0, 0, 0, 0);
            // Evicting a dirty entry flushes its store's cache: every count goes out, with its changelog record.
            assertEquals(2 * records.size(), produced(task.punctuate()).size());
            assertTrue(fixture.failures.isEmpty(), fixture.failures.toString());
        }
    }

    @Test
    void theGlobalThreadsCacheTakesItsNewShareAtItsNextBatch() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(count(true), cache(300_000, 2))) {
            final TaskEnvironment environment = fixture.environment();
            final GlobalStateRunner global = environment.createGlobal(
                OffsetFraming.write(Map.of(new TopicPartition("global-input", 0), 0L)));
            final List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
            for (int i = 0; i < 150; i++) {
                records.add(record("global-input", 0, i, 1_000L + i, bytes("key-" + i), bytes("v")));
            }
            global.process(batch(records));
            assertEquals(0, global.uncommittedBytes(), "100 000 bytes hold every entry: none reached the store");

            for (int added = 0; added < 48; added++) {
                environment.threadAdded("app-StreamThread-" + (3 + added));
            }
            global.process(batch(List.of(record("global-input", 0, 150, 2_000L, bytes("key-150"), bytes("v")))));
            assertTrue(global.uncommittedBytes() > 0, "the shrunk cache evicted into the store");
            global.close(true);
            assertTrue(fixture.failures.isEmpty(), fixture.failures.toString());
        }
    }

    private static byte[] bytes(final String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
