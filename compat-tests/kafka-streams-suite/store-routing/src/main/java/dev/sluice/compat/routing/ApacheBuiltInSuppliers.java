package dev.sluice.compat.routing;

import java.net.URL;
import java.net.URLClassLoader;
import org.apache.kafka.streams.state.DslStoreSuppliers;

/**
 * Kafka Streams' own built-in DSL store suppliers, unchanged, although this jar's stand-in hides
 * them from the application class loader: their classes are loaded from the kafka-streams jar by a
 * class loader of their own, everything they use comes from the application class loader.
 */
final class ApacheBuiltInSuppliers {

    private static final String BUILT_IN = "org.apache.kafka.streams.state.BuiltInDslStoreSuppliers";
    private static final ClassLoader ORIGINALS = new OriginalsClassLoader(
        DslStoreSuppliers.class.getProtectionDomain().getCodeSource().getLocation(),
        ApacheBuiltInSuppliers.class.getClassLoader());

    private ApacheBuiltInSuppliers() {
    }

    static DslStoreSuppliers create(final StoreRouting.Request request) {
        final String name = BUILT_IN + (request == StoreRouting.Request.PERSISTENT
            ? "$RocksDBDslStoreSuppliers" : "$InMemoryDslStoreSuppliers");
        try {
            return Class.forName(name, true, ORIGINALS).asSubclass(DslStoreSuppliers.class)
                .getConstructor().newInstance();
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException("Cannot load Kafka Streams' " + name, e);
        }
    }

    private static final class OriginalsClassLoader extends URLClassLoader {

        OriginalsClassLoader(final URL kafkaStreamsJar, final ClassLoader parent) {
            super(new URL[] {kafkaStreamsJar}, parent);
        }

        @Override
        protected Class<?> loadClass(final String name, final boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith(BUILT_IN)) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                final Class<?> loaded = findLoadedClass(name);
                return loaded != null ? loaded : findClass(name);
            }
        }
    }
}
