package dev.sluice.examples.gradle.storesonly;

import dev.sluice.streams.internals.NativeChecks;
import dev.sluice.streams.internals.NativeLibrary;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Shows that a Gradle-built application can use both Kafka Streams and Sluice's stores: prints a
 * topology, then loads Sluice's native library from the sluice-stores jar and prints its version
 * and where that jar came from.
 */
public final class StoresOnlyConsumer {

    private StoresOnlyConsumer() {
    }

    public static void main(final String[] args) throws Exception {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream("words")
            .groupByKey()
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("word-counts"));
        System.out.println(builder.build().describe());

        NativeLibrary.load();
        System.out.println("sluice.native.version=" + NativeChecks.version());
        System.out.println("sluice.stores.location="
            + NativeLibrary.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }
}
