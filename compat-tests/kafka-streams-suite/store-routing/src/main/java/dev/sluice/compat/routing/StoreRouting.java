package dev.sluice.compat.routing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.streams.state.DslStoreSuppliers;

/**
 * Who serves the DSL's stores in the suite's Sluice run, and the tally of what was served.
 *
 * <p>Sluice's suppliers keep Kafka Streams' own stores for the kinds Sluice has no store for. Every
 * store handed out is counted as Sluice's or Apache's by the supplier actually returned, so the
 * report can say which store kinds the run really put on Sluice. The tally is written when the JVM exits, to the file named by
 * the {@value #TALLY_FILE_PROPERTY} system property.
 */
public final class StoreRouting {

    /** What the topology asked for: Kafka Streams' persistent (RocksDB) or in-memory built-ins. */
    public enum Request { PERSISTENT, IN_MEMORY }

    public static final String SLUICE_SUPPLIERS = "dev.sluice.streams.state.SluiceDslStoreSuppliers";
    public static final String TALLY_FILE_PROPERTY = "sluice.compat.storeTally";

    private static final Map<String, LongAdder> TALLY = new ConcurrentHashMap<>();

    static {
        final String tallyFile = System.getProperty(TALLY_FILE_PROPERTY);
        if (tallyFile != null) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> writeTally(Path.of(tallyFile))));
        }
    }

    private StoreRouting() {
    }

    static <S> S record(final Request request, final String kind, final S supplier) {
        final String servedBy = supplier.getClass().getName().startsWith("dev.sluice.") ? "Sluice" : "Apache";
        final String key = String.join("\t", request.name(), kind, servedBy, supplier.getClass().getName());
        TALLY.computeIfAbsent(key, k -> new LongAdder()).increment();
        return supplier;
    }

    // By name, the way Kafka Streams instantiates dsl.store.suppliers.class: the suite builds and
    // runs its baseline whether or not sluice-stores has DSL suppliers yet.
    static DslStoreSuppliers newSluiceSuppliers(final Request request) {
        final String className = request == Request.IN_MEMORY ? SLUICE_SUPPLIERS + "$InMemory" : SLUICE_SUPPLIERS;
        try {
            return Class.forName(className).asSubclass(DslStoreSuppliers.class).getConstructor().newInstance();
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException("Sluice's DSL store suppliers are not on the class path: " + className, e);
        }
    }

    private static void writeTally(final Path file) {
        final List<String> lines = new ArrayList<>();
        TALLY.forEach((key, count) -> lines.add(key + "\t" + count.sum()));
        try {
            Files.write(file, lines);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
