package dev.sluice.compat.parity.apps;

import dev.sluice.examples.launcher.ExampleLauncher;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A topology that {@code topology.optimization=all} (given in its configs) rewrites: a source table whose topic serves as its
 * changelog (no changelog topic of its own), and two aggregations of one re-keyed stream that share
 * one repartition topic. Readings are joined with the sensors' names (output key {@code <sensor>/named}),
 * and counted and summed per sensor and parity of the reading ({@code <sensor>/<parity>/count|sum}).
 */
public final class OptimizedTopology {

    public static final String READINGS_TOPIC = "optimized-readings";
    public static final String SENSORS_TOPIC = "optimized-sensors";

    private OptimizedTopology() {
    }

    public static Topology topology(final String outputTopic, final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        final KStream<String, Long> readings = builder.stream(READINGS_TOPIC, Consumed.with(Serdes.String(), Serdes.Long()));
        final KTable<String, String> sensors = builder.table(SENSORS_TOPIC, Consumed.with(Serdes.String(), Serdes.String()),
            Materialized.as("sensor-names"));
        final Produced<String, String> produced = Produced.with(Serdes.String(), Serdes.String());
        readings.join(sensors, (reading, name) -> reading + " from " + name)
            .selectKey((sensor, value) -> sensor + "/named")
            .to(outputTopic, produced);
        final KGroupedStream<String, Long> byParity = readings.selectKey((sensor, reading) -> sensor + "/" + reading % 2)
            .groupByKey(Grouped.with(Serdes.String(), Serdes.Long()));
        byParity.count(Materialized.with(Serdes.String(), Serdes.Long()))
            .toStream((key, count) -> key + "/count")
            .mapValues(count -> Long.toString(count))
            .to(outputTopic, produced);
        byParity.reduce(Long::sum, Materialized.with(Serdes.String(), Serdes.Long()))
            .toStream((key, sum) -> key + "/sum")
            .mapValues(sum -> Long.toString(sum))
            .to(outputTopic, produced);
        return builder.build(config);
    }

    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "optimized-topology", "optimized-topology-output", (config, output) -> topology(output, config));
    }
}
