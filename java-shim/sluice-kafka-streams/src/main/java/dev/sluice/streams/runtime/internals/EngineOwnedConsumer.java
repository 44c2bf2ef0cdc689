package dev.sluice.streams.runtime.internals;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetCommitCallback;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.KafkaMetric;

/**
 * A consumer as Kafka Streams' internals see it where Sluice's engine owns the real one: every method
 * throws {@link UnsupportedOperationException}, saying what the user may ask, and each subclass answers
 * the few questions its user asks.
 */
abstract class EngineOwnedConsumer implements Consumer<byte[], byte[]> {

    private final String whatItAnswers;

    /** {@code whatItAnswers} completes the message of every unsupported call. */
    EngineOwnedConsumer(final String whatItAnswers) {
        this.whatItAnswers = whatItAnswers;
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(final Set<TopicPartition> partitions) {
        throw unsupported();
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(final Set<TopicPartition> partitions, final Duration timeout) {
        throw unsupported();
    }

    @Override
    public long position(final TopicPartition partition) {
        throw unsupported();
    }

    @Override
    public long position(final TopicPartition partition, final Duration timeout) {
        throw unsupported();
    }

    @Override
    public OptionalLong currentLag(final TopicPartition partition) {
        throw unsupported();
    }

    @Override
    public void pause(final Collection<TopicPartition> partitions) {
        throw unsupported();
    }

    @Override
    public void resume(final Collection<TopicPartition> partitions) {
        throw unsupported();
    }

    @Override
    public Set<TopicPartition> paused() {
        throw unsupported();
    }

    @Override
    public void seek(final TopicPartition partition, final OffsetAndMetadata offsetAndMetadata) {
        throw unsupported();
    }

    @Override
    public void close() {
        throw unsupported();
    }

    @Override
    public void close(final Duration timeout) {
        throw unsupported();
    }

    @Override
    public void close(final CloseOptions option) {
        throw unsupported();
    }

    @Override
    public Map<MetricName, ? extends Metric> metrics() {
        throw unsupported();
    }

    @Override
    public Set<TopicPartition> assignment() {
        throw unsupported();
    }

    @Override
    public Set<String> subscription() {
        throw unsupported();
    }

    @Override
    public void subscribe(final Collection<String> topics) {
        throw unsupported();
    }

    @Override
    public void subscribe(final Collection<String> topics, final ConsumerRebalanceListener callback) {
        throw unsupported();
    }

    @Override
    public void assign(final Collection<TopicPartition> partitions) {
        throw unsupported();
    }

    @Override
    public void subscribe(final Pattern pattern, final ConsumerRebalanceListener callback) {
        throw unsupported();
    }

    @Override
    public void subscribe(final Pattern pattern) {
        throw unsupported();
    }

    @Override
    public void subscribe(final SubscriptionPattern pattern, final ConsumerRebalanceListener callback) {
        throw unsupported();
    }

    @Override
    public void subscribe(final SubscriptionPattern pattern) {
        throw unsupported();
    }

    @Override
    public void unsubscribe() {
        throw unsupported();
    }

    @Override
    public ConsumerRecords<byte[], byte[]> poll(final Duration timeout) {
        throw unsupported();
    }

    @Override
    public void commitSync() {
        throw unsupported();
    }

    @Override
    public void commitSync(final Duration timeout) {
        throw unsupported();
    }

    @Override
    public void commitSync(final Map<TopicPartition, OffsetAndMetadata> offsets) {
        throw unsupported();
    }

    @Override
    public void commitSync(final Map<TopicPartition, OffsetAndMetadata> offsets, final Duration timeout) {
        throw unsupported();
    }

    @Override
    public void commitAsync() {
        throw unsupported();
    }

    @Override
    public void commitAsync(final OffsetCommitCallback callback) {
        throw unsupported();
    }

    @Override
    public void commitAsync(final Map<TopicPartition, OffsetAndMetadata> offsets, final OffsetCommitCallback callback) {
        throw unsupported();
    }

    @Override
    public void registerMetricForSubscription(final KafkaMetric metric) {
        throw unsupported();
    }

    @Override
    public void unregisterMetricFromSubscription(final KafkaMetric metric) {
        throw unsupported();
    }

    @Override
    public void seek(final TopicPartition partition, final long offset) {
        throw unsupported();
    }

    @Override
    public void seekToBeginning(final Collection<TopicPartition> partitions) {
        throw unsupported();
    }

    @Override
    public void seekToEnd(final Collection<TopicPartition> partitions) {
        throw unsupported();
    }

    @Override
    public Uuid clientInstanceId(final Duration timeout) {
        throw unsupported();
    }

    @Override
    public List<PartitionInfo> partitionsFor(final String topic) {
        throw unsupported();
    }

    @Override
    public List<PartitionInfo> partitionsFor(final String topic, final Duration timeout) {
        throw unsupported();
    }

    @Override
    public Map<String, List<PartitionInfo>> listTopics() {
        throw unsupported();
    }

    @Override
    public Map<String, List<PartitionInfo>> listTopics(final Duration timeout) {
        throw unsupported();
    }

    @Override
    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(final Map<TopicPartition, Long> timestampsToSearch) {
        throw unsupported();
    }

    @Override
    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(final Map<TopicPartition, Long> timestampsToSearch,
                                                                   final Duration timeout) {
        throw unsupported();
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(final Collection<TopicPartition> partitions) {
        throw unsupported();
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(final Collection<TopicPartition> partitions, final Duration timeout) {
        throw unsupported();
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(final Collection<TopicPartition> partitions) {
        throw unsupported();
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(final Collection<TopicPartition> partitions, final Duration timeout) {
        throw unsupported();
    }

    @Override
    public ConsumerGroupMetadata groupMetadata() {
        throw unsupported();
    }

    @Override
    public void enforceRebalance() {
        throw unsupported();
    }

    @Override
    public void enforceRebalance(final String reason) {
        throw unsupported();
    }

    @Override
    public void wakeup() {
        throw unsupported();
    }

    /** What a call this consumer does not answer throws. */
    protected final UnsupportedOperationException unsupported() {
        return new UnsupportedOperationException("Sluice's engine owns the consumer; " + whatItAnswers);
    }
}
