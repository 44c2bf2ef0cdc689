package dev.sluice.compat.parity.apps;

import dev.sluice.examples.launcher.ExampleLauncher;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * Orders joined with a versioned table of customer tiers, whose updates come partly out of order: each
 * order finds the tier valid at its own timestamp. An inner join (output key {@code <customer>/inner})
 * and a left join with a grace period, which holds orders back until the table has caught up with
 * them ({@code .../left-grace}). Value {@code <amount>@<tier or none>}.
 */
public final class VersionedTableJoins {

    public static final String ORDERS_TOPIC = "versioned-orders";
    public static final String TIERS_TOPIC = "versioned-tiers";
    public static final Duration HISTORY = Duration.ofMinutes(30);

    private VersionedTableJoins() {
    }

    public static Topology topology(final String outputTopic, final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        final KStream<String, Long> orders = builder.stream(ORDERS_TOPIC, Consumed.with(Serdes.String(), Serdes.Long()));
        final KTable<String, String> tiers = builder.table(TIERS_TOPIC, Consumed.with(Serdes.String(), Serdes.String()),
            Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("tiers-versioned", HISTORY))
                .withKeySerde(Serdes.String()).withValueSerde(Serdes.String()));
        final Produced<String, String> produced = Produced.with(Serdes.String(), Serdes.String());
        orders.join(tiers, (amount, tier) -> amount + "@" + tier)
            .selectKey((customer, value) -> customer + "/inner")
            .to(outputTopic, produced);
        orders.leftJoin(tiers, (amount, tier) -> amount + "@" + (tier == null ? "none" : tier),
                Joined.<String, Long, String>with(Serdes.String(), Serdes.Long(), Serdes.String())
                    .withGracePeriod(Duration.ofSeconds(15)))
            .selectKey((customer, value) -> customer + "/left-grace")
            .to(outputTopic, produced);
        return builder.build();
    }

    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "versioned-table-joins", "versioned-table-joins-output", (config, output) -> topology(output, config));
    }
}
