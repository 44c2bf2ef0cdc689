package org.apache.kafka.streams.processor.internals;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.internals.StreamsRebalanceData;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.HostInfo;

/**
 * What a member of a streams group tells the broker about its client, made as Kafka Streams' stream thread makes
 * it: the topology's subtopologies with their source, repartition and changelog topics and co-partition groups,
 * the endpoint ({@code application.server}), rack ({@code client.rack}), client tags, the topology description
 * when {@code topology.description.push.enabled}, and the task offset sums. In this package because Kafka Streams
 * keeps these steps to its stream thread.
 */
public final class StreamsGroupData {

    private StreamsGroupData() {
    }

    /**
     * The rebalance data of one member of {@code processId}'s client; the offset sums are read by the consumer's
     * background thread, so they must be safe to call from any thread.
     */
    public static StreamsRebalanceData create(final UUID processId, final StreamsConfig config,
                                              final TopologyMetadata topology,
                                              final Supplier<Map<StreamsRebalanceData.TaskId, Long>> taskOffsetSums,
                                              final Supplier<Map<StreamsRebalanceData.TaskId, Long>> taskEndOffsetSums) {
        final HostInfo endpoint = HostInfo.buildFromEndpoint(config.getString(StreamsConfig.APPLICATION_SERVER_CONFIG));
        final Object rack = config.originals().get(CommonClientConfigs.CLIENT_RACK_CONFIG);
        return StreamThread.initStreamsRebalanceData(processId, config,
            Optional.ofNullable(endpoint).map(host -> new StreamsRebalanceData.HostInfo(host.host(), host.port())),
            rack instanceof String && !((String) rack).isEmpty() ? Optional.of((String) rack) : Optional.empty(),
            topology, taskOffsetSums, taskEndOffsetSums);
    }

    /**
     * Tells interactive queries' metadata every client's active and standby partitions, as the broker sent them with
     * its last heartbeat answer.
     */
    public static void updateMetadata(final StreamsMetadataState metadataState,
                                      final Map<StreamsRebalanceData.HostInfo, StreamsRebalanceData.EndpointPartitions> partitionsByHost) {
        final Map<HostInfo, Set<TopicPartition>> active = new HashMap<>();
        final Map<HostInfo, Set<TopicPartition>> standby = new HashMap<>();
        partitionsByHost.forEach((host, partitions) -> {
            final HostInfo hostInfo = new HostInfo(host.host(), host.port());
            active.put(hostInfo, new HashSet<>(partitions.activePartitions()));
            standby.put(hostInfo, new HashSet<>(partitions.standbyPartitions()));
        });
        metadataState.onChange(active, standby, StreamThread.getTopicPartitionInfo(active));
    }
}
