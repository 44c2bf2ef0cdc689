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
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;

/**
 * Readings re-keyed and aggregated behind three kinds of repartition topic: {@code repartition()}
 * without a name, {@code repartition()} named and with a partition count of its own, and the one
 * {@code groupBy} makes. Each new key is derived from the sensor (its band of values), so a new key's
 * records all come from one upstream task, in order. Output keys {@code <sensor>/<band>/<kind>}.
 */
public final class Repartitions {

    public static final String INPUT_TOPIC = "repartition-readings";

    private Repartitions() {
    }

    public static Topology topology(final String outputTopic, final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        final KStream<String, Long> readings = builder.stream(INPUT_TOPIC, Consumed.with(Serdes.String(), Serdes.Long()));
        final Produced<String, String> produced = Produced.with(Serdes.String(), Serdes.String());
        readings.selectKey((sensor, reading) -> sensor + "/" + reading % 3 + "/unnamed")
            .repartition(Repartitioned.with(Serdes.String(), Serdes.Long()))
            .groupByKey(Grouped.with(Serdes.String(), Serdes.Long()))
            .reduce(Long::sum, Materialized.with(Serdes.String(), Serdes.Long()))
            .toStream()
            .mapValues(sum -> "sum " + sum)
            .to(outputTopic, produced);
        readings.selectKey((sensor, reading) -> sensor + "/" + reading % 2 + "/named")
            .repartition(Repartitioned.<String, Long>as("by-parity").withKeySerde(Serdes.String())
                .withValueSerde(Serdes.Long()).withNumberOfPartitions(2))
            .groupByKey(Grouped.with(Serdes.String(), Serdes.Long()))
            .count(Materialized.with(Serdes.String(), Serdes.Long()))
            .toStream()
            .mapValues(count -> "count " + count)
            .to(outputTopic, produced);
        readings.groupBy((sensor, reading) -> sensor + "/" + (reading > 50 ? "high" : "low") + "/grouped",
                Grouped.with("by-level", Serdes.String(), Serdes.Long()))
            .aggregate(() -> 0L, (key, reading, max) -> Math.max(reading, max), Materialized.with(Serdes.String(), Serdes.Long()))
            .toStream()
            .mapValues(max -> "max " + max)
            .to(outputTopic, produced);
        return builder.build();
    }

    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "repartitions", "repartitions-output", (config, output) -> topology(output, config));
    }
}
