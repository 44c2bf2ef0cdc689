package dev.sluice.streams.runtime.internals;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;

/**
 * The producer under one task's {@link org.apache.kafka.streams.processor.internals.RecordCollectorImpl}:
 * it keeps what the task sends until the task runner hands the batch to the engine, which owns the real
 * producer and its transaction. Sends never complete here: the engine knows the offsets and delivery
 * errors, and the runner gives the delivered changelog offsets to the state manager itself, so no
 * callback ever sees an offset that was never written.
 *
 * <p>A record the engine failed to write comes back by its number among the records sent since the last
 * commit; the producer notes where each was sent from ({@link SendOrigins}) until the engine says it is
 * answered, so that the failure can be handled in the context that produced it.
 */
final class BufferingProducer implements Producer<byte[], byte[]> {

    private final Function<String, List<PartitionInfo>> partitionLookup;
    private final InternalProcessorContext<?, ?> context;
    private final RuntimeFraming.ProducedRecords sent = new RuntimeFraming.ProducedRecords();
    private final SendOrigins origins = new SendOrigins();
    // Set while a failed record is sent again for its callback: the next send fails with it.
    private Exception failure;

    /**
     * @param partitionLookup the partitions of a topic, for tasks that choose partitions themselves
     * @param context the task's context, which says what the task is processing when it sends
     */
    BufferingProducer(final Function<String, List<PartitionInfo>> partitionLookup,
                      final InternalProcessorContext<?, ?> context) {
        this.partitionLookup = partitionLookup;
        this.context = context;
    }

    /**
     * The records sent since the last call, in order, framed as {@link RuntimeFraming} says; valid until
     * the next send.
     */
    byte[][] drain() {
        return sent.drain();
    }

    /** Forgets what was sent and not drained (the task is closed dirty). */
    void clear() {
        sent.clear();
        committed();
    }

    /** Everything sent so far was written: no failure can come back for it. */
    void committed() {
        origins.clear();
    }

    /** The records numbered below {@code below} since the last commit can no longer fail. */
    void answered(final long below) {
        origins.answered(below);
    }

    /** Where record number {@code index} since the last commit was sent from. */
    SendOrigins.Origin origin(final long index) {
        return origins.origin(index);
    }

    /** The next send completes at once with {@code exception} instead of being kept. */
    void failNextSend(final Exception exception) {
        failure = exception;
    }

    @Override
    public Future<RecordMetadata> send(final ProducerRecord<byte[], byte[]> record) {
        return send(record, null);
    }

    @Override
    public Future<RecordMetadata> send(final ProducerRecord<byte[], byte[]> record, final Callback callback) {
        if (failure != null) {
            final Exception exception = failure;
            failure = null;
            callback.onCompletion(null, exception);
            return CompletableFuture.failedFuture(exception);
        }
        origins.sent(context.recordContext(), context.currentNode());
        // Framed at once, as a real producer serialises at once: the headers object may be the processed
        // record's, which processors downstream may still change.
        sent.add(record);
        return new CompletableFuture<>();
    }

    @Override
    public void flush() {
        // Nothing is in flight here: the batch goes to the engine with the runner's return value.
    }

    @Override
    public List<PartitionInfo> partitionsFor(final String topic) {
        return partitionLookup.apply(topic);
    }

    @Override
    public Map<MetricName, ? extends Metric> metrics() {
        return Map.of();
    }

    @Override
    public void registerMetricForSubscription(final KafkaMetric metric) {
    }

    @Override
    public void unregisterMetricFromSubscription(final KafkaMetric metric) {
    }

    @Override
    public void close() {
    }

    @Override
    public void close(final Duration timeout) {
    }

    @Override
    public void initTransactions() {
        throw transactionsAreTheEngines();
    }

    @Override
    public void beginTransaction() {
        throw transactionsAreTheEngines();
    }

    @Override
    public void sendOffsetsToTransaction(final Map<TopicPartition, OffsetAndMetadata> offsets,
                                         final ConsumerGroupMetadata groupMetadata) {
        throw transactionsAreTheEngines();
    }

    @Override
    public void commitTransaction() {
        throw transactionsAreTheEngines();
    }

    @Override
    public void abortTransaction() {
        throw transactionsAreTheEngines();
    }

    @Override
    public Uuid clientInstanceId(final Duration timeout) {
        throw new UnsupportedOperationException("Sluice's engine owns the producer");
    }

    private static UnsupportedOperationException transactionsAreTheEngines() {
        return new UnsupportedOperationException("Sluice's engine runs the producer's transactions");
    }
}
