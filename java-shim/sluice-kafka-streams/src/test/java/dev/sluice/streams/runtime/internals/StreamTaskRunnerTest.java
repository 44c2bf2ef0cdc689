package dev.sluice.streams.runtime.internals;

import static dev.sluice.streams.runtime.internals.TaskRunnerFixture.batch;
import static dev.sluice.streams.runtime.internals.TaskRunnerFixture.consumedBack;
import static dev.sluice.streams.runtime.internals.TaskRunnerFixture.produced;
import static dev.sluice.streams.runtime.internals.TaskRunnerFixture.record;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.internals.OffsetFraming;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;
import org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.junit.jupiter.api.Test;

/** The task runner driven as the engine drives it, with framed batches and no Kafka. */
class StreamTaskRunnerTest {

    /** Two input topics merged into one output: a task with two input partitions. */
    private static final Supplier<Topology> MERGE = () -> {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(List.of("left", "right"), Consumed.with(Serdes.String(), Serdes.String()))
            .to("merged", Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    };


    private static final String INPUT = "input";
    private static final String REPARTITION = "app-words-repartition";
    private static final String CHANGELOG = "app-counts-changelog";
    private static final String OUTPUT = "output";
    private static final TopicPartition REPARTITION_0 = new TopicPartition(REPARTITION, 0);
    private static final TopicPartition CHANGELOG_0 = new TopicPartition(CHANGELOG, 0);

    static Topology wordCount() {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(INPUT, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.asList(line.toLowerCase().split(" ")))
            .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts"))
            .toStream()
            .to(OUTPUT, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    @Test
    void wordCountWithCachingEmitsOnFlush() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::wordCount, new Properties())) {
            final TaskRunner split = fixture.running(0, 0);
            final List<ProducerRecord<byte[], byte[]>> repartitioned = produced(split.process(batch(List.of(
                record(INPUT, 0, 0L, 1_000L, bytes("a"), bytes("Hello world")),
                record(INPUT, 0, 1L, 2_000L, bytes("b"), bytes("hello"))))));
            assertEquals(List.of("hello", "world", "hello"), keys(repartitioned));
            for (final ProducerRecord<byte[], byte[]> record : repartitioned) {
                assertEquals(REPARTITION, record.topic());
                assertNull(record.partition(), "the engine's producer partitions repartition records by key");
            }
            assertEquals(List.of(1_000L, 1_000L, 2_000L), timestamps(repartitioned));

            final TaskRunner count = fixture.running(1, 0);
            assertEquals(List.of(), produced(count.process(batch(consumedBack(repartitioned, 0, 0L)))),
                "the cache holds the counts until the commit flushes it");
            final List<ProducerRecord<byte[], byte[]>> flushed = produced(count.flush());
            assertEquals(Map.of("hello", 2L, "world", 1L), counts(flushed, OUTPUT));
            final List<ProducerRecord<byte[], byte[]>> changelog = only(flushed, CHANGELOG);
            assertEquals(2, changelog.size());
            for (final ProducerRecord<byte[], byte[]> record : changelog) {
                assertEquals(0, record.partition(), "changelog records go to the task's partition");
            }

            final Map<TopicPartition, OffsetAndMetadata> offsets = RuntimeFraming.readInputs(count.committableOffsets());
            assertEquals(Map.of(REPARTITION_0, 3L), Map.of(REPARTITION_0, offsets.get(REPARTITION_0).offset()));
            assertFalse(offsets.get(REPARTITION_0).metadata().isEmpty(), "stream time travels with the offsets");
            assertTrue(fixture.failures.isEmpty());
        }
    }

    @Test
    void withoutCachingEmitsWhatTopologyTestDriverEmits() throws Exception {
        final Properties noCache = new Properties();
        noCache.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0L);
        final List<String> lines = List.of("the quick fox", "the lazy dog", "The end");

        final List<ProducerRecord<byte[], byte[]>> expected = new ArrayList<>();
        final Properties reference = new Properties();
        reference.put(StreamsConfig.APPLICATION_ID_CONFIG, "app");
        reference.putAll(noCache);
        try (TopologyTestDriver driver = new TopologyTestDriver(wordCount(), reference)) {
            final TestInputTopic<String, String> input = driver.createInputTopic(INPUT, new StringSerializer(), new StringSerializer());
            long timestamp = 1_000L;
            for (final String line : lines) {
                input.pipeInput("k", line, timestamp += 1_000L);
            }
            for (final String topic : List.of(OUTPUT, CHANGELOG)) {
                ProducerRecord<byte[], byte[]> record;
                while ((record = readReference(driver, topic)) != null) {
                    expected.add(record);
                }
            }
        }

        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::wordCount, noCache)) {
            final TaskRunner split = fixture.running(0, 0);
            final List<ConsumerRecord<byte[], byte[]>> input = new ArrayList<>();
            long timestamp = 1_000L;
            for (final String line : lines) {
                input.add(record(INPUT, 0, input.size(), timestamp += 1_000L, bytes("k"), bytes(line)));
            }
            final List<ProducerRecord<byte[], byte[]>> repartitioned = produced(split.process(batch(input)));
            final TaskRunner count = fixture.running(1, 0);
            final List<ProducerRecord<byte[], byte[]>> emitted = produced(count.process(batch(consumedBack(repartitioned, 0, 0L))));
            emitted.addAll(produced(count.flush()));
            final List<ProducerRecord<byte[], byte[]>> actual = new ArrayList<>(only(emitted, OUTPUT));
            actual.addAll(only(emitted, CHANGELOG));
            assertSameRecords(expected, actual);
        }
    }

    @Test
    void restoresFromChangelogRecordsThenCountsOn() throws Exception {
        final List<ConsumerRecord<byte[], byte[]>> changelog;
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::wordCount, new Properties())) {
            final TaskRunner count = fixture.running(1, 0);
            count.process(batch(List.of(
                record(REPARTITION, 0, 0L, 10L, bytes("hello"), bytes("x")),
                record(REPARTITION, 0, 1L, 11L, bytes("world"), bytes("x")),
                record(REPARTITION, 0, 2L, 12L, bytes("hello"), bytes("x")))));
            changelog = consumedBack(only(produced(count.flush()), CHANGELOG), 0, 0L);
            count.close(false);
        }
        assertEquals(2, changelog.size());

        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::wordCount, new Properties())) {
            final TaskRunner count = fixture.create(1, 0, Map.of());
            assertEquals(java.util.Collections.singletonMap(CHANGELOG_0, null), offsetsOrNone(count.committedChangelogOffsets()));
            count.restore(batch(changelog));
            count.restored();
            count.process(batch(List.of(record(REPARTITION, 0, 3L, 13L, bytes("hello"), bytes("x")))));
            assertEquals(Map.of("hello", 3L), counts(produced(count.flush()), OUTPUT));
            assertEquals(Map.of(CHANGELOG_0, 1L), offsetsOrNone(count.committedChangelogOffsets()),
                "restored records are committed with their offsets");

            final StateStore store = fixture.environment().localStores("counts").get(0);
            assertNotNull(store, "a running task's store is there for interactive queries");
            StateStore innermost = store;
            while (innermost instanceof WrappedStateStore) {
                innermost = ((WrappedStateStore<?, ?, ?>) innermost).wrapped();
            }
            assertTrue(innermost.getClass().getName().startsWith("dev.sluice."),
                "the DSL's built-in store is Sluice's, not " + innermost.getClass().getName());
            @SuppressWarnings("unchecked")
            final KeyValueStore<String, ValueAndTimestamp<Long>> counts = (KeyValueStore<String, ValueAndTimestamp<Long>>) store;
            assertEquals(1L, counts.get("world").value());
            assertEquals(java.util.Set.of(TaskRunnerFixture.task(1, 0)), fixture.environment().localTasks().keySet());
            assertEquals(java.util.Set.of(REPARTITION_0),
                fixture.environment().localTasks().get(TaskRunnerFixture.task(1, 0)).topicPartitions());
            count.close(false);
            assertTrue(fixture.environment().localTasks().isEmpty());
        }
    }

    @Test
    void committedStateSurvivesCloseAndReopenAndRollbackDropsTheRest() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::wordCount, new Properties())) {
            TaskRunner count = fixture.running(1, 0);
            count.process(batch(List.of(
                record(REPARTITION, 0, 0L, 10L, bytes("hello"), bytes("x")),
                record(REPARTITION, 0, 1L, 11L, bytes("hello"), bytes("x")))));
            assertEquals(Map.of("hello", 2L), counts(produced(count.flush()), OUTPUT));
            final byte[] committable = count.committableOffsets();
            final TaskMetadata metadata = fixture.environment().localTasks().get(TaskRunnerFixture.task(1, 0));
            assertEquals(Map.of(REPARTITION_0, 1L), metadata.endOffsets(), "the highest offset fetched");
            assertEquals(Map.of(REPARTITION_0, -1L), metadata.committedOffsets(), "none committed yet");
            count.committed(deliveredOffsets(Map.of(CHANGELOG_0, 0L, new TopicPartition(OUTPUT, 0), 7L)));
            assertEquals(Map.of(REPARTITION_0, 2L), metadata.committedOffsets(),
                "the metadata follows the task: the offset the commit took");
            count.close(true);

            fixture.reopen();
            final Map<TopicPartition, OffsetAndMetadata> inputs = RuntimeFraming.readInputs(committable);
            assertEquals(2L, inputs.get(REPARTITION_0).offset());
            count = fixture.create(1, 0, inputs);
            assertEquals(Map.of(CHANGELOG_0, 0L), offsetsOrNone(count.committedChangelogOffsets()),
                "the store committed the changelog offset the engine delivered");
            count.restored();
            count.process(batch(List.of(record(REPARTITION, 0, 2L, 12L, bytes("hello"), bytes("x")))));
            assertEquals(Map.of("hello", 3L), counts(produced(count.flush()), OUTPUT));

            // Uncommitted: the flush above was never followed by a successful commit.
            final TaskMetadata beforeRollback = fixture.environment().localTasks().get(TaskRunnerFixture.task(1, 0));
            assertEquals(Map.of(REPARTITION_0, 2L), beforeRollback.endOffsets());
            count.rolledBack("the test aborts the transaction");
            assertEquals(Map.of(REPARTITION_0, 2L),
                fixture.environment().localTasks().get(TaskRunnerFixture.task(1, 0)).endOffsets(),
                "the rebuilt task's metadata goes on from the rolled back one's");
            count.process(batch(List.of(record(REPARTITION, 0, 2L, 12L, bytes("hello"), bytes("x")))));
            assertEquals(Map.of("hello", 3L), counts(produced(count.flush()), OUTPUT),
                "the rollback dropped the uncommitted count");
            assertEquals(2L + 1L, RuntimeFraming.readInputs(count.committableOffsets()).get(REPARTITION_0).offset());
            count.close(false);
            assertTrue(fixture.failures.isEmpty());
        }
    }

    @Test
    void wipingStateDropsEveryStoresData() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::wordCount, new Properties())) {
            final TaskRunner count = fixture.running(1, 0);
            count.process(batch(List.of(record(REPARTITION, 0, 0L, 10L, bytes("hello"), bytes("x")))));
            count.flush();
            count.committed(deliveredOffsets(Map.of(CHANGELOG_0, 4L)));
            count.wipeState();
            assertEquals(java.util.Collections.singletonMap(CHANGELOG_0, null), offsetsOrNone(count.committedChangelogOffsets()));
            count.restored();
            count.process(batch(List.of(record(REPARTITION, 0, 1L, 11L, bytes("hello"), bytes("x")))));
            assertEquals(Map.of("hello", 1L), counts(produced(count.flush()), OUTPUT));
            count.close(false);
            assertTrue(fixture.failures.isEmpty());
        }
    }

    @Test
    void exceptionHandlersAreKafkaStreams() throws Exception {
        final Properties handlers = new Properties();
        handlers.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, LogAndContinueExceptionHandler.class);
        handlers.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, LogAndContinueProcessingExceptionHandler.class);
        final Supplier<Topology> topology = () -> {
            final StreamsBuilder builder = new StreamsBuilder();
            builder.stream("numbers", Consumed.with(Serdes.String(), Serdes.Long()))
                .mapValues(number -> 100 / number)
                .to("quotients", Produced.with(Serdes.String(), Serdes.Long()));
            return builder.build();
        };
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(topology, handlers)) {
            final TaskRunner task = fixture.running(0, 0);
            final List<ProducerRecord<byte[], byte[]>> out = produced(task.process(batch(List.of(
                record("numbers", 0, 0L, 1L, bytes("not a long"), bytes("abc")),
                record("numbers", 0, 1L, 2L, bytes("zero"), longBytes(0L)),
                record("numbers", 0, 2L, 3L, bytes("five"), longBytes(5L))))));
            assertEquals(Map.of("five", 20L), counts(out, "quotients"),
                "the undeserializable record and the failing one are skipped by the configured handlers");
            task.flush();
            assertEquals(3L, RuntimeFraming.readInputs(task.committableOffsets()).get(new TopicPartition("numbers", 0)).offset());
            task.close(false);
            assertTrue(fixture.failures.isEmpty());
        }
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(topology, new Properties())) {
            final TaskRunner task = fixture.running(0, 0);
            assertThrows(StreamsException.class, () -> task.process(batch(List.of(
                record("numbers", 0, 0L, 1L, bytes("not a long"), bytes("abc"))))),
                "the default deserialization handler fails");
            assertEquals(1, fixture.failures.size());
            task.close(false);
        }
    }

    /** Resumes after every failed send, noting the offset of the source record the handler was told of. */
    public static final class NotingProductionHandler implements ProductionExceptionHandler {
        static final List<Long> OFFSETS = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public Response handleError(final ErrorHandlerContext context, final ProducerRecord<byte[], byte[]> record,
                                    final Exception exception) {
            OFFSETS.add(context.offset());
            return Response.resume();
        }

        @Override
        public void configure(final Map<String, ?> configs) {
        }
    }

    @Test
    void aFailedSendIsHandledInItsSourceRecordsContextUntilTheRecordIsAnswered() throws Exception {
        final Properties handler = new Properties();
        handler.put(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, NotingProductionHandler.class);
        NotingProductionHandler.OFFSETS.clear();
        final Supplier<Topology> forwarding = () -> {
            final StreamsBuilder builder = new StreamsBuilder();
            builder.stream(INPUT, Consumed.with(Serdes.String(), Serdes.String()))
                .to(OUTPUT, Produced.with(Serdes.String(), Serdes.String()));
            return builder.build();
        };
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(forwarding, handler)) {
            final TaskRunner task = fixture.running(0, 0);
            final List<ProducerRecord<byte[], byte[]>> out = produced(task.process(batch(List.of(
                record(INPUT, 0, 10L, 1L, bytes("a"), bytes("1")),
                record(INPUT, 0, 11L, 2L, bytes("b"), bytes("2")),
                record(INPUT, 0, 12L, 3L, bytes("c"), bytes("3"))))));
            assertEquals(3, out.size());
            task.sendsAnswered(2);
            final byte[] failed = RuntimeFraming.producedRecords(List.of(out.get(2)));
            produced(task.sendFailed(2, failed, Errors.MESSAGE_TOO_LARGE.code(), "too large"));
            assertEquals(List.of(12L), NotingProductionHandler.OFFSETS, "the failed record's own source record");
            assertThrows(IllegalStateException.class,
                () -> task.sendFailed(1, RuntimeFraming.producedRecords(List.of(out.get(1))), Errors.MESSAGE_TOO_LARGE.code(),
                    "too large"),
                "an answered record's context is forgotten");
            task.close(false);
        }
    }

    @Test
    void aPartitionWithRecordsStillOnTheBrokerHoldsTheOthersBack() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(MERGE, new Properties())) {
            final TaskRunner task = fixture.running(0, 1);
            task.updateLags(lags(0L, null));
            assertEquals(List.of(), keys(produced(task.process(batch(List.of(
                record("left", 1, 0L, 1_000L, bytes("a"), bytes("a"))))))),
                "a partition whose lag is not known yet holds the task back");
            task.updateLags(lags(0L, 1L));
            assertEquals(List.of(), keys(produced(task.punctuate())),
                "a partition with a record on the broker holds the task back");
            task.updateLags(lags(0L, 0L));
            assertEquals(List.of("x", "a"), keys(produced(task.process(batch(List.of(
                record("right", 1, 0L, 500L, bytes("x"), bytes("x"))))))),
                "once it arrived, the records go in timestamp order");
            task.close(false);
        }
    }

    @Test
    @SuppressWarnings("deprecation")
    void anInputWhoseQueueIsFullIsReportedUntilItHasRoomAgain() throws Exception {
        final Properties properties = new Properties();
        properties.put(StreamsConfig.BUFFERED_RECORDS_PER_PARTITION_CONFIG, 2);
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(MERGE, properties)) {
            final TaskRunner task = fixture.running(0, 1);
            final TopicPartition left = new TopicPartition("left", 1);
            task.updateLags(lags(0L, null));
            assertEquals(Set.of(), OffsetFraming.read(task.fullInputs()).keySet());
            // Held back by the other input's unknown lag, the queue passes its bound.
            task.process(batch(List.of(
                record("left", 1, 0L, 1_000L, bytes("a"), bytes("a")),
                record("left", 1, 1L, 2_000L, bytes("b"), bytes("b")),
                record("left", 1, 2L, 3_000L, bytes("c"), bytes("c")))));
            assertEquals(Set.of(left), OffsetFraming.read(task.fullInputs()).keySet());
            task.updateLags(lags(0L, 0L));
            assertEquals(List.of("a", "b", "c"), keys(produced(task.punctuate())));
            assertEquals(Set.of(), OffsetFraming.read(task.fullInputs()).keySet(),
                "once the queue drained, the input has room again");
            task.close(false);
        }
    }

    /** The framed lags of the merge topology's two inputs; null for a lag not known yet. */
    private static byte[] lags(final Long left, final Long right) {
        final Map<TopicPartition, Long> lags = new LinkedHashMap<>();
        lags.put(new TopicPartition("left", 1), left);
        lags.put(new TopicPartition("right", 1), right);
        return OffsetFraming.write(lags);
    }

    @Test
    void recordsOfSeveralPartitionsAreProcessedInTimestampOrder() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(MERGE, new Properties())) {
            final TaskRunner task = fixture.running(0, 1);
            task.updateLags(lags(0L, 0L));
            final List<ProducerRecord<byte[], byte[]>> merged = produced(task.process(batch(List.of(
                record("left", 1, 0L, 1_000L, bytes("a"), bytes("a")),
                record("left", 1, 1L, 5_000L, bytes("b"), bytes("b")),
                record("right", 1, 0L, 3_000L, bytes("x"), bytes("x"))))));
            assertEquals(List.of("a", "x", "b"), keys(merged), "the head record with the lowest timestamp goes first");
            task.flush();
            final Map<TopicPartition, OffsetAndMetadata> offsets = RuntimeFraming.readInputs(task.committableOffsets());
            assertEquals(2L, offsets.get(new TopicPartition("left", 1)).offset());
            assertEquals(1L, offsets.get(new TopicPartition("right", 1)).offset());
            task.close(false);
        }
    }

    @Test
    void nothingToCommitWithoutProcessing() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::wordCount, new Properties())) {
            final TaskRunner count = fixture.running(1, 0);
            assertEquals(List.of(), produced(count.flush()));
            assertEquals(Map.of(), RuntimeFraming.readInputs(count.committableOffsets()));
            assertEquals(0L, count.uncommittedBytes());
            count.process(batch(List.of(record(REPARTITION, 0, 0L, 10L, bytes("hello"), bytes("x")))));
            count.flush();
            assertTrue(count.uncommittedBytes() > 0, "the count is written but not committed");
            count.close(false);
        }
    }

    @Test
    void aCommitTheProcessorAsksForIsReportedUntilTheTaskCommitted() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::committingOnRequest, new Properties())) {
            final TaskRunner task = fixture.running(0, 0);
            assertFalse(task.commitRequested(), "nothing asked yet");
            task.process(batch(List.of(record("events", 0, 0L, 1_000L, bytes("a"), bytes("a")))));
            assertFalse(task.commitRequested(), "processing alone asks for no commit");
            task.process(batch(List.of(record("events", 0, 1L, 2_000L, bytes("commit"), bytes("b")))));
            assertTrue(task.commitRequested(), "the processor called ProcessorContext#commit");
            task.flush();
            task.committableOffsets();
            task.committed(deliveredOffsets(Map.of()));
            assertFalse(task.commitRequested(), "the commit answered the request");
            task.close(true);
        }
    }

    /** Passes records on; one keyed "commit" asks for a commit. */
    static Topology committingOnRequest() {
        final Topology topology = new Topology();
        topology.addSource("source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), "events");
        topology.addProcessor("committing", () -> new Processor<byte[], byte[], byte[], byte[]>() {
            private ProcessorContext<byte[], byte[]> context;

            @Override
            public void init(final ProcessorContext<byte[], byte[]> context) {
                this.context = context;
            }

            @Override
            public void process(final Record<byte[], byte[]> record) {
                if ("commit".equals(new String(record.key(), StandardCharsets.UTF_8))) {
                    context.commit();
                }
                context.forward(record);
            }
        }, "source");
        topology.addSink("sink", "passed", new ByteArraySerializer(), new ByteArraySerializer(), "committing");
        return topology;
    }

    @Test
    void punctuatesOnStreamTimeAfterProcessingAndOnWallClockTimeWhenDue() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::punctuating, new Properties())) {
            final TaskRunner task = fixture.running(0, 0);
            final List<ProducerRecord<byte[], byte[]>> first = produced(task.process(batch(List.of(
                record("events", 0, 0L, 1_000L, bytes("a"), bytes("1")),
                record("events", 0, 1L, 6_000L, bytes("b"), bytes("2")),
                record("events", 0, 2L, 12_000L, bytes("c"), bytes("3"))))));
            assertEquals(List.of("record", "stream", "record", "stream", "record", "stream"), keys(first),
                "stream-time punctuation runs after each record that moves stream time past its schedule");
            assertEquals(List.of(1_000L, 1_000L, 6_000L, 6_000L, 12_000L, 12_000L), timestamps(first),
                "a punctuation gets the stream time it runs at");

            assertEquals(List.of(), produced(task.punctuate()), "no wall-clock punctuation before it is due");
            fixture.time.advance(Duration.ofSeconds(10).toMillis());
            final List<ProducerRecord<byte[], byte[]>> wall = produced(task.punctuate());
            assertEquals(List.of("wall"), keys(wall));
            assertEquals(List.of(), produced(task.punctuate()), "once per interval");
            task.close(false);
            assertTrue(fixture.failures.isEmpty());
        }
    }

    @Test
    void streamTimeComesBackFromTheCommittedMetadata() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::punctuating, new Properties())) {
            TaskRunner task = fixture.running(0, 0);
            task.process(batch(List.of(record("events", 0, 0L, 50_000L, bytes("a"), bytes("1")))));
            task.flush();
            final byte[] committed = task.committableOffsets();
            task.committed(deliveredOffsets(Map.of()));
            task.close(true);

            fixture.reopen();
            task = fixture.create(0, 0, RuntimeFraming.readInputs(committed));
            task.committedChangelogOffsets();
            task.restored();
            final List<ProducerRecord<byte[], byte[]>> out = produced(task.process(batch(List.of(
                record("events", 0, 1L, 20_000L, bytes("late"), bytes("2"))))));
            assertEquals("record", key(out.get(0)));
            assertEquals(50_000L, ByteBuffer.wrap(out.get(0).value()).getLong(),
                "the stream time the processor sees is the one committed before the restart");
            task.close(false);
        }
    }

    @Test
    void failuresAreReportedBeforeTheyPropagate() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::punctuating, new Properties())) {
            final TaskRunner task = fixture.running(0, 0);
            final StreamsException failure = assertThrows(StreamsException.class, () -> task.process(batch(List.of(
                record("events", 0, 0L, 1_000L, bytes("fail"), bytes("1"))))));
            assertEquals(1, fixture.failures.size());
            assertSame(failure, fixture.failures.get(0));
            task.close(false);
        }
    }

    /** Forwards each record as "record" with the stream time it sees; punctuates every 5 s of stream time and 10 s of wall-clock time. */
    static Topology punctuating() {
        final Topology topology = new Topology();
        topology.addSource("source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), "events");
        topology.addProcessor("punctuating", () -> new Processor<byte[], byte[], byte[], byte[]>() {
            private ProcessorContext<byte[], byte[]> context;

            @Override
            public void init(final ProcessorContext<byte[], byte[]> context) {
                this.context = context;
                context.schedule(Duration.ofSeconds(5), PunctuationType.STREAM_TIME,
                    time -> context.forward(new Record<>(bytes("stream"), longBytes(time), time)));
                context.schedule(Duration.ofSeconds(10), PunctuationType.WALL_CLOCK_TIME,
                    time -> context.forward(new Record<>(bytes("wall"), longBytes(time), context.currentStreamTimeMs())));
            }

            @Override
            public void process(final Record<byte[], byte[]> record) {
                if ("fail".equals(new String(record.key(), StandardCharsets.UTF_8))) {
                    throw new IllegalStateException("asked to fail");
                }
                context.forward(new Record<>(bytes("record"), longBytes(context.currentStreamTimeMs()), record.timestamp()));
            }
        }, "source");
        topology.addSink("sink", "punctuations", new ByteArraySerializer(), new ByteArraySerializer(), "punctuating");
        return topology;
    }

    private static ProducerRecord<byte[], byte[]> readReference(final TopologyTestDriver driver, final String topic) {
        try {
            final java.lang.reflect.Method read = TopologyTestDriver.class.getDeclaredMethod("readRecord", String.class);
            read.setAccessible(true);
            @SuppressWarnings("unchecked")
            final ProducerRecord<byte[], byte[]> record = (ProducerRecord<byte[], byte[]>) read.invoke(driver, topic);
            return record;
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void assertSameRecords(final List<ProducerRecord<byte[], byte[]>> expected,
                                          final List<ProducerRecord<byte[], byte[]>> actual) {
        assertEquals(describe(expected), describe(actual));
        for (int i = 0; i < expected.size(); i++) {
            assertArrayEquals(expected.get(i).key(), actual.get(i).key());
            assertArrayEquals(expected.get(i).value(), actual.get(i).value(), "value of record " + i);
            assertArrayEquals(expected.get(i).headers().toArray(), actual.get(i).headers().toArray(), "headers of record " + i);
        }
    }

    private static List<String> describe(final List<ProducerRecord<byte[], byte[]>> records) {
        final List<String> described = new ArrayList<>();
        for (final ProducerRecord<byte[], byte[]> record : records) {
            described.add(record.topic() + " " + key(record) + "@" + record.timestamp());
        }
        return described;
    }

    private static Map<TopicPartition, Long> offsetsOrNone(final byte[] framed) {
        return new LinkedHashMap<>(OffsetFraming.read(framed));
    }

    private static byte[] deliveredOffsets(final Map<TopicPartition, Long> offsets) {
        return OffsetFraming.write(offsets);
    }

    private static List<ProducerRecord<byte[], byte[]>> only(final List<ProducerRecord<byte[], byte[]>> records, final String topic) {
        final List<ProducerRecord<byte[], byte[]>> matching = new ArrayList<>();
        for (final ProducerRecord<byte[], byte[]> record : records) {
            if (record.topic().equals(topic)) {
                matching.add(record);
            }
        }
        return matching;
    }

    private static Map<String, Long> counts(final List<ProducerRecord<byte[], byte[]>> records, final String topic) {
        final Map<String, Long> counts = new LinkedHashMap<>();
        try (LongDeserializer longs = new LongDeserializer()) {
            for (final ProducerRecord<byte[], byte[]> record : only(records, topic)) {
                counts.put(key(record), longs.deserialize(topic, record.value()));
            }
        }
        return counts;
    }

    private static List<String> keys(final List<ProducerRecord<byte[], byte[]>> records) {
        final List<String> keys = new ArrayList<>();
        for (final ProducerRecord<byte[], byte[]> record : records) {
            keys.add(key(record));
        }
        return keys;
    }

    private static List<Long> timestamps(final List<ProducerRecord<byte[], byte[]>> records) {
        final List<Long> timestamps = new ArrayList<>();
        for (final ProducerRecord<byte[], byte[]> record : records) {
            timestamps.add(record.timestamp());
        }
        return timestamps;
    }

    private static String key(final ProducerRecord<byte[], byte[]> record) {
        try (StringDeserializer strings = new StringDeserializer()) {
            return strings.deserialize(record.topic(), record.key());
        }
    }

    private static byte[] longBytes(final long value) {
        try (LongSerializer longs = new LongSerializer()) {
            return longs.serialize("", value);
        }
    }

    private static byte[] bytes(final String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The end offset sums a streams group's member reports, as Kafka Streams' state updater keeps them: a restoring
     * task's and a standby replica's from where their changelogs end as last read, {@link Long#MAX_VALUE} while an
     * end is not known; a running task is left out.
     */
    @Test
    void restoringTasksAndStandbyReplicasReportWhereTheirChangelogsEnd() throws Exception {
        try (TaskRunnerFixture fixture = new TaskRunnerFixture(StreamTaskRunnerTest::wordCount, new Properties())) {
            final TaskEnvironment environment = fixture.environment();
            final RestoreProgress progress = new RestoreProgress(null, null, environment.taskProgress());
            final TaskId restoring = TaskRunnerFixture.task(1, 0);
            final TaskId standby = TaskRunnerFixture.task(1, 1);
            final Set<TaskId> active = Set.of(restoring);
            final TaskRunner count = fixture.create(1, 0, Map.of());
            final StateRunner replica = environment.createStandby(1, 1);
            assertEquals(Map.of(restoring, Long.MAX_VALUE, standby, Long.MAX_VALUE),
                environment.taskEndOffsetSums(active, Set.of(standby)), "no end known yet");

            progress.restoreStarted("counts", CHANGELOG, 0, 3, 40);
            progress.standbyUpdateStarted("counts", CHANGELOG, 1, 0, 7);
            assertEquals(Map.of(restoring, 40L, standby, 7L), environment.taskEndOffsetSums(active, Set.of(standby)));
            progress.standbyBatchLoaded("counts", CHANGELOG, 1, 1, 8, 9, 12);
            assertEquals(Map.of(restoring, 40L, standby, 12L), environment.taskEndOffsetSums(active, Set.of(standby)));
            assertEquals(Map.of(), environment.taskEndOffsetSums(Set.of(), Set.of()), "the tasks of another thread");

            progress.restoreEnded("counts", CHANGELOG, 0, 37);
            count.committedChangelogOffsets();
            count.restored();
            assertEquals(Map.of(standby, 12L), environment.taskEndOffsetSums(active, Set.of(standby)),
                "a running task is not brought up to date any more");
            count.close(true);
            replica.close(true);
        }
    }
}
