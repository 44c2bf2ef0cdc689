package dev.sluice.streams.state.internals;

import dev.sluice.streams.internals.NativeLibrary;

/**
 * How many native objects this process holds, by kind. Every count returns to where it was once
 * the Java objects that own them are closed; tests and operators use this to prove nothing leaks.
 */
public final class NativeHandles {

    static {
        NativeLibrary.load();
    }

    private NativeHandles() {
    }

    /** Open key-value stores. */
    public static native long liveStores();

    /** Open store iterators. */
    public static native long liveIterators();

    /** Shared RocksDB memory pools. */
    public static native long liveRocksDbResources();

    /** Stream threads' record caches. */
    public static native long liveRecordCaches();
}
