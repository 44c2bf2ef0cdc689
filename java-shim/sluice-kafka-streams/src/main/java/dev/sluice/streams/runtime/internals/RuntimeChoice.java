package dev.sluice.streams.runtime.internals;

import dev.sluice.streams.internals.NativeLibrary;
import java.util.Locale;
import org.apache.kafka.common.config.ConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which runtime runs the Kafka Streams applications of this JVM: Sluice's engine and stores, or Apache Kafka
 * Streams' own runtime and stores, whose entry points the drop-in jar carries from Apache's binary under other
 * names ({@code ApacheKafkaStreams}, {@code ApacheStores}, {@code ApacheBuiltInDslStoreSuppliers}).
 *
 * <p>Decided once per JVM, when the first client or store is made, from the system property
 * {@value #RUNTIME_PROPERTY}:
 * <ul>
 *   <li>unset: Sluice's, unless the jar carries no native library for this platform, in which case Apache's,
 *       with one warning naming the platform;</li>
 *   <li>{@code sluice}: Sluice's, and a platform without the native library fails as the library fails to load;</li>
 *   <li>{@code apache}: Apache's, so that an operator can move an instance back without a new build.</li>
 * </ul>
 * A JVM property and not a {@code StreamsConfig} key, since the stores a topology names are made before any
 * configuration exists ({@code Stores.persistentKeyValueStore(name)}), and a client and its stores must run
 * on the same runtime.
 */
public final class RuntimeChoice {

    public static final String RUNTIME_PROPERTY = "sluice.runtime";

    private static final Logger LOG = LoggerFactory.getLogger(RuntimeChoice.class);

    private static Boolean apache;

    private RuntimeChoice() {
    }

    /** True when this JVM runs applications on Apache Kafka Streams' runtime and stores. */
    public static synchronized boolean apacheRuntime() {
        if (apache == null) {
            apache = apacheRuntime(System.getProperty(RUNTIME_PROPERTY), NativeLibrary.availableHere());
        }
        return apache;
    }

    static boolean apacheRuntime(final String chosen, final boolean nativeLibraryAvailable) {
        final String runtime = chosen == null ? "" : chosen.trim().toLowerCase(Locale.ROOT);
        switch (runtime) {
            case "":
                if (nativeLibraryAvailable) {
                    return false;
                }
                LOG.warn("Sluice has no native library for this platform ({}: os.name={}, os.arch={}); Kafka Streams "
                        + "applications in this JVM run on Apache Kafka Streams' own runtime and stores",
                    NativeLibrary.currentPlatform(), System.getProperty("os.name"), System.getProperty("os.arch"));
                return true;
            case "sluice":
                return false;
            case "apache":
                LOG.info("{}=apache: Kafka Streams applications in this JVM run on Apache Kafka Streams' own runtime "
                    + "and stores", RUNTIME_PROPERTY);
                return true;
            default:
                throw new ConfigException(RUNTIME_PROPERTY, chosen, "must be sluice or apache");
        }
    }
}
