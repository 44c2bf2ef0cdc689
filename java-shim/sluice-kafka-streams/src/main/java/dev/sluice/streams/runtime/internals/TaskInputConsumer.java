package dev.sluice.streams.runtime.internals;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.KafkaMetric;

/**
 * The main consumer as one {@link org.apache.kafka.streams.processor.internals.StreamTask} sees it. The
 * engine owns the real consumer; a task asks its consumer only for the committed offsets of its inputs
 * (stream time comes back from their metadata), its position after the records handed to it, and its
 * lag, and asks it to pause or resume partitions whose buffer is full. Committed offsets are those the
 * engine passed at creation, then those of each commit; the position is past the last record handed
 * over; the lag is the engine consumer's, as last reported (unknown before). A task pauses an input whose
 * record queue is full and resumes it once the queue has room again ({@code buffered.records.per.partition}):
 * this consumer remembers which, and the engine stops fetching those. Everything else is no task's business
 * and unsupported.
 */
final class TaskInputConsumer extends EngineOwnedConsumer {

    private final Map<TopicPartition, OffsetAndMetadata> committed;
    private final Map<TopicPartition, Long> positions = new HashMap<>();
    private final Map<TopicPartition, Long> lags = new HashMap<>();
    private final Set<TopicPartition> paused = new HashSet<>();

    TaskInputConsumer(final Map<TopicPartition, OffsetAndMetadata> committed) {
        super("a task only reads its committed offsets");
        this.committed = new HashMap<>(committed);
    }

    /** Records up to {@code lastOffset} of {@code partition} were handed to the task. */
    void handedOver(final TopicPartition partition, final long lastOffset) {
        positions.put(partition, lastOffset + 1);
    }

    /** The engine's consumer is {@code lags} records behind the end of each partition (null: not known). */
    void lags(final Map<TopicPartition, Long> lags) {
        this.lags.putAll(lags);
    }

    /** A commit of these offsets succeeded. */
    void committed(final Map<TopicPartition, OffsetAndMetadata> offsets) {
        committed.putAll(offsets);
    }

    /** The last committed offsets, the inputs a task rebuilt after a rollback starts from. */
    Map<TopicPartition, OffsetAndMetadata> committedOffsets() {
        return new HashMap<>(committed);
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(final Set<TopicPartition> partitions) {
        final Map<TopicPartition, OffsetAndMetadata> answer = new HashMap<>();
        for (final TopicPartition partition : partitions) {
            final OffsetAndMetadata offset = committed.get(partition);
            if (offset != null) {
                answer.put(partition, offset);
            }
        }
        return answer;
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(final Set<TopicPartition> partitions, final Duration timeout) {
        return committed(partitions);
    }

    @Override
    public long position(final TopicPartition partition) {
        final Long position = positions.get(partition);
        if (position != null) {
            return position;
        }
        final OffsetAndMetadata start = committed.get(partition);
        if (start == null) {
            throw new IllegalStateException("No records of " + partition + " were handed to the task yet");
        }
        return start.offset();
    }

    @Override
    public long position(final TopicPartition partition, final Duration timeout) {
        return position(partition);
    }

    @Override
    public OptionalLong currentLag(final TopicPartition partition) {
        final Long lag = lags.get(partition);
        return lag == null ? OptionalLong.empty() : OptionalLong.of(lag);
    }

    @Override
    public void pause(final Collection<TopicPartition> partitions) {
        paused.addAll(partitions);
    }

    @Override
    public void resume(final Collection<TopicPartition> partitions) {
        paused.removeAll(partitions);
    }

    @Override
    public Set<TopicPartition> paused() {
        return Set.copyOf(paused);
    }

    @Override
    public void seek(final TopicPartition partition, final OffsetAndMetadata offsetAndMetadata) {
        // Kafka Streams seeks to a committed offset only for partitions it was told to reset; the
        // engine resets offsets itself.
    }

    @Override
    public void close() {
    }

    @Override
    public void close(final Duration timeout) {
    }

    @Override
    public void close(final CloseOptions option) {
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
}
