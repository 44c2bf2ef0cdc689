package dev.sluice.compat.parity.apps;

import dev.sluice.examples.launcher.ExampleLauncher;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.ValueJoiner;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Tables joined on their keys and derived from one another: a table of accounts' tiers (from its
 * topic) and a table of their latest balances (a stream made a table with {@code toTable}) joined
 * inner, left and outer (output keys {@code <account>/inner|left|outer}, value {@code <tier>&<balance>}
 * with {@code -} for a missing side, or a tombstone); the outer join's changes held back by
 * {@code suppress} for 30 s of stream time ({@code .../settled}); the balances filtered and
 * materialized ({@code .../rich}); and the balances re-keyed through a table {@code groupBy}, whose
 * subtractor takes a balance's old value out as its adder puts the new one in ({@code .../total}).
 */
public final class TableJoins {

    public static final String TIERS_TOPIC = "table-tiers";
    public static final String BALANCES_TOPIC = "table-balances";

    private static final ValueJoiner<String, Long, String> BOTH_SIDES =
        (tier, balance) -> (tier == null ? "-" : tier) + "&" + (balance == null ? "-" : balance);

    private TableJoins() {
    }

    public static Topology topology(final String outputTopic, final Properties config) {
        final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(new StreamsConfig(config)));
        final KTable<String, String> tiers = builder.table(TIERS_TOPIC, Consumed.with(Serdes.String(), Serdes.String()));
        final KTable<String, Long> balances = builder.stream(BALANCES_TOPIC, Consumed.with(Serdes.String(), Serdes.Long()))
            .toTable(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("balances")
                .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()));
        final Produced<String, String> produced = Produced.with(Serdes.String(), Serdes.String());

        tiers.join(balances, BOTH_SIDES).toStream((account, value) -> account + "/inner").to(outputTopic, produced);
        tiers.leftJoin(balances, BOTH_SIDES).toStream((account, value) -> account + "/left").to(outputTopic, produced);
        final KTable<String, String> outer = tiers.outerJoin(balances, BOTH_SIDES,
            Materialized.with(Serdes.String(), Serdes.String()));
        outer.toStream((account, value) -> account + "/outer").to(outputTopic, produced);
        outer.suppress(Suppressed.untilTimeLimit(Duration.ofSeconds(30), Suppressed.BufferConfig.unbounded()))
            .toStream((account, value) -> account + "/settled").to(outputTopic, produced);

        balances.filter((account, balance) -> balance >= 500, Materialized.with(Serdes.String(), Serdes.Long()))
            .toStream((account, balance) -> account + "/rich")
            .mapValues(balance -> balance == null ? null : Long.toString(balance))
            .to(outputTopic, produced);
        // A new key per account: all of a key's records then come from one upstream task, in order.
        balances.groupBy((account, balance) -> KeyValue.pair(account + "/total", balance),
                Grouped.with(Serdes.String(), Serdes.Long()))
            .reduce(Long::sum, (total, balance) -> total - balance, Materialized.with(Serdes.String(), Serdes.Long()))
            .toStream()
            .mapValues(total -> Long.toString(total))
            .to(outputTopic, produced);
        return builder.build();
    }

    public static void main(final String[] args) throws InterruptedException {
        ExampleLauncher.run(args, "table-joins", "table-joins-output", (config, output) -> topology(output, config));
    }
}
