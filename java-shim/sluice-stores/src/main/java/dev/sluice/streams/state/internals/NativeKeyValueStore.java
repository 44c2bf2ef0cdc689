package dev.sluice.streams.state.internals;

import dev.sluice.streams.internals.NativeLibrary;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.streams.errors.InvalidStateStoreException;

/**
 * A native transactional key-value store, owned through a handle. Every read names its isolation:
 * {@code readCommitted} true sees committed state only, false also the writes staged since the last
 * commit. Closing twice is harmless; any other call after close raises
 * {@link InvalidStateStoreException}, also when a call on another thread races the close.
 */
final class NativeKeyValueStore implements NativeTransactionalStore {

    static {
        NativeLibrary.load();
    }

    private final String name;
    private final AutoCloseable onClose;
    private final NativeHandle handle;

    private NativeKeyValueStore(final String name, final long handle, final AutoCloseable onClose) {
        this.name = name;
        this.handle = new NativeHandle(handle, "Store " + name + " is currently closed.");
        this.onClose = onClose;
    }

    /**
     * Opens or creates the RocksDB store in {@code directory}, with the RocksDB {@code settings} (by
     * RocksDB option name) over the defaults. Raises {@link StoreDirectoryCorruptedException} when the
     * directory holds anything but an intact store, {@link IllegalArgumentException} for a setting the
     * store refuses (see {@link #refusedRocksDbSettings}). {@code onClose} runs after the store closed
     * (it returns what the store borrowed).
     */
    static NativeKeyValueStore rocksDb(final String name, final Path directory,
                                       final NativeRocksDbResources resources, final Map<String, String> settings,
                                       final AutoCloseable onClose) {
        return new NativeKeyValueStore(name,
            openRocksDb(name, directory.toString(), resources.handle(), pairs(settings)), onClose);
    }

    /** Of RocksDB {@code settings}, those a store refuses, each with the reason. */
    static Map<String, String> refusedRocksDbSettings(final Map<String, String> settings) {
        final String[] refused = refusedRocksDbSettings(pairs(settings));
        final Map<String, String> reasons = new LinkedHashMap<>();
        for (int i = 0; i + 1 < refused.length; i += 2) {
            reasons.put(refused[i], refused[i + 1]);
        }
        return reasons;
    }

    private static String[] pairs(final Map<String, String> settings) {
        final String[] pairs = new String[settings.size() * 2];
        int i = 0;
        for (final Map.Entry<String, String> setting : settings.entrySet()) {
            pairs[i++] = setting.getKey();
            pairs[i++] = setting.getValue();
        }
        return pairs;
    }

    /** Creates an empty in-memory store. */
    static NativeKeyValueStore inMemory(final String name) {
        return new NativeKeyValueStore(name, openInMemory(name), () -> { });
    }

    /** Deletes a closed store's directory and everything in it. */
    static void destroy(final Path directory) {
        destroyDirectory(directory.toString());
    }

    byte[] get(final byte[] key, final boolean readCommitted) {
        return get(handle(), key, readCommitted);
    }

    void put(final byte[] key, final byte[] value) {
        put(handle(), key, value);
    }

    byte[] putIfAbsent(final byte[] key, final byte[] value) {
        return putIfAbsent(handle(), key, value);
    }

    /** Stages a batch framed as {@link EntryFraming} entries. */
    void putAll(final byte[] batch) {
        putAll(handle(), batch);
    }

    byte[] delete(final byte[] key) {
        return delete(handle(), key);
    }

    /** A scan of {@code [from, to]}, null ends open, as a native iterator handle. */
    long range(final byte[] from, final byte[] to, final boolean reverse, final boolean readCommitted) {
        return range(handle(), from, to, reverse, readCommitted);
    }

    long prefixScan(final byte[] prefix, final boolean readCommitted) {
        return prefixScan(handle(), prefix, readCommitted);
    }

    long approximateNumEntries(final boolean readCommitted) {
        return approximateNumEntries(handle(), readCommitted);
    }

    @Override
    public void commit(final byte[] offsets, final byte[] position) {
        commit(handle(), offsets, position);
    }

    @Override
    public long committedOffset(final String topic, final int partition) {
        return committedOffset(handle(), topic, partition);
    }

    @Override
    public byte[] committedPosition() {
        return committedPosition(handle());
    }

    @Override
    public void rollback() {
        rollback(handle());
    }

    @Override
    public int settleValueLayout(final int layout) {
        return settleValueLayout(handle(), layout);
    }

    @Override
    public long approximateNumUncommittedBytes() {
        final long open = handle.openOrZero();
        return open == NativeHandle.TAKEN ? 0 : approximateNumUncommittedBytes(open);
    }

    String name() {
        return name;
    }

    /**
     * The backend's numeric property {@code name} (RocksDB's {@code rocksdb.*} properties), or -1 where
     * the backend has none (the in-memory store has none).
     */
    long backendProperty(final String name) {
        return backendProperty(handle(), name);
    }

    /** The native handle, for stores opened over this one; it stays valid until {@link #close()}. */
    long handleForLayering() {
        return handle();
    }

    @Override
    public void close() {
        final long open = handle.take();
        if (open == NativeHandle.TAKEN) {
            return;
        }
        try {
            close(open);
        } finally {
            try {
                onClose.close();
            } catch (final Exception e) {
                throw new IllegalStateException("releasing what store " + name + " held failed", e);
            }
        }
    }

    private long handle() {
        return handle.open();
    }

    private static native long openRocksDb(String name, String directory, long resources, String[] settings);

    private static native String[] refusedRocksDbSettings(String[] settings);

    private static native long backendProperty(long handle, String name);

    private static native long openInMemory(String name);

    private static native void destroyDirectory(String directory);

    private static native byte[] get(long handle, byte[] key, boolean readCommitted);

    private static native void put(long handle, byte[] key, byte[] value);

    private static native byte[] putIfAbsent(long handle, byte[] key, byte[] value);

    private static native void putAll(long handle, byte[] batch);

    private static native byte[] delete(long handle, byte[] key);

    private static native long range(long handle, byte[] from, byte[] to, boolean reverse, boolean readCommitted);

    private static native long prefixScan(long handle, byte[] prefix, boolean readCommitted);

    private static native long approximateNumEntries(long handle, boolean readCommitted);

    private static native void commit(long handle, byte[] offsets, byte[] position);

    private static native long committedOffset(long handle, String topic, int partition);

    private static native byte[] committedPosition(long handle);

    private static native void rollback(long handle);

    private static native int settleValueLayout(long handle, int layout);

    private static native long approximateNumUncommittedBytes(long handle);

    private static native void close(long handle);
}
