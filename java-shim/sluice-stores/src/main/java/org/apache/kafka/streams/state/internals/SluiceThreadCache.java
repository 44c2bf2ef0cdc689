package org.apache.kafka.streams.state.internals;

import dev.sluice.streams.state.internals.NativeRecordCache;
import java.nio.ByteBuffer;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.RandomAccess;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.processor.internals.metrics.TaskMetrics;
import org.apache.kafka.streams.state.internals.metrics.NamedCacheMetrics;
import org.slf4j.Logger;

/**
 * Kafka Streams' record cache with its entries held natively ({@link NativeRecordCache}) rather than on
 * the JVM heap, where every update of a cached key left a new entry, its record context and headers to be
 * copied by the next young collection. Every caching store keeps Kafka Streams' code; this keeps {@link
 * ThreadCache}'s behaviour: sizes as Kafka Streams estimates them, eviction of the least recently used
 * entry from the cache that grew while the thread is over its budget, a dirty eviction flushing the
 * cache's dirty entries (the evicted one first), flushes in the order keys were last written, clean
 * entries on read misses, range iterators over a snapshot of the keys, and the cache metrics.
 *
 * <p>The stream thread writes; interactive queries may read concurrently, so the native calls and the
 * buffers they share are serialised, while flush listeners run outside that lock. Close it when the
 * thread is done with it.
 */
public final class SluiceThreadCache extends ThreadCache implements AutoCloseable {

    private final Logger log;
    private final StreamsMetricsImpl metrics;
    private final NativeRecordCache cache = new NativeRecordCache();
    private final CacheEntryFrames frames = new CacheEntryFrames();
    private final Map<String, NamedCacheState> caches = new HashMap<>();
    private final AtomicLong sizeInBytes = new AtomicLong();
    private volatile long maxCacheSizeBytes;
    private byte[] readBuffer = new byte[256];

    private long numPuts;
    private long numGets;
    private long numEvicts;
    private long numFlushes;

    public SluiceThreadCache(final LogContext logContext, final long maxCacheSizeBytes,
                             final StreamsMetricsImpl metrics) {
        super(logContext, maxCacheSizeBytes, metrics);
        this.log = logContext.logger(getClass());
        this.metrics = metrics;
        this.maxCacheSizeBytes = maxCacheSizeBytes;
    }

    @Override
    public long puts() {
        return numPuts;
    }

    @Override
    public long gets() {
        return numGets;
    }

    @Override
    public long evicts() {
        return numEvicts;
    }

    @Override
    public long flushes() {
        return numFlushes;
    }

    @Override
    public synchronized void resize(final long newCacheSizeBytes) {
        final boolean shrink = newCacheSizeBytes < maxCacheSizeBytes;
        maxCacheSizeBytes = newCacheSizeBytes;
        log.debug("Cache size was {} to {}", shrink ? "shrunk" : "expanded", newCacheSizeBytes);
        if (!shrink || caches.isEmpty()) {
            return;
        }
        // Round the caches, as Kafka Streams does, one eviction each, until the thread is within its size.
        final List<NamedCacheState> inTurn = new ArrayList<>(caches.values());
        int next = 0;
        while (sizeInBytes.get() > maxCacheSizeBytes) {
            evict(inTurn.get(next));
            numEvicts++;
            next = (next + 1) % inTurn.size();
        }
    }

    @Override
    public void addDirtyEntryFlushListener(final String namespace, final DirtyEntryFlushListener listener) {
        getOrCreateCache(namespace).listener = listener;
    }

    @Override
    public void flush(final String namespace) {
        numFlushes++;
        final NamedCacheState named = getCache(namespace);
        if (named == null) {
            return;
        }
        named.requireListener();
        final byte[] change;
        synchronized (this) {
            change = cache.flush(named.id);
        }
        handOn(named, change, false);
        if (log.isTraceEnabled()) {
            log.trace("Cache stats on flush: #puts={}, #gets={}, #evicts={}, #flushes={}", puts(), gets(), evicts(),
                flushes());
        }
    }

    @Override
    public LRUCacheEntry get(final String namespace, final Bytes key) {
        numGets++;
        if (key == null) {
            return null;
        }
        final NamedCacheState named = getCache(namespace);
        return named == null ? null : named.get(key);
    }

    @Override
    public void put(final String namespace, final Bytes key, final LRUCacheEntry value) {
        numPuts++;
        final NamedCacheState named = getOrCreateCache(namespace);
        named.put(key, value);
        maybeEvict(namespace, named);
    }

    @Override
    public LRUCacheEntry putIfAbsent(final String namespace, final Bytes key, final LRUCacheEntry value) {
        final NamedCacheState named = getOrCreateCache(namespace);
        final LRUCacheEntry existing = named.get(key);
        if (existing == null) {
            named.put(key, value);
        }
        maybeEvict(namespace, named);
        if (existing == null) {
            numPuts++;
        }
        return existing;
    }

    @Override
    public void putAll(final String namespace, final List<KeyValue<Bytes, LRUCacheEntry>> entries) {
        for (final KeyValue<Bytes, LRUCacheEntry> entry : entries) {
            put(namespace, entry.key, entry.value);
        }
    }

    @Override
    public LRUCacheEntry delete(final String namespace, final Bytes key) {
        final NamedCacheState named = getCache(namespace);
        if (named == null) {
            return null;
        }
        final LRUCacheEntry removed;
        synchronized (this) {
            final ByteBuffer change = ByteBuffer.wrap(cache.delete(named.id, key.get()));
            named.resized(change.getLong());
            removed = change.hasRemaining()
                ? frames.read(change.array(), change.position() + 1, change.remaining() - 1,
                    change.get(change.position()) != 0)
                : null;
        }
        if (removed != null) {
            named.sizeRecorded();
        }
        return removed;
    }

    @Override
    public MemoryLRUCacheBytesIterator range(final String namespace, final Bytes from, final Bytes to) {
        return range(namespace, from, to, true);
    }

    @Override
    public MemoryLRUCacheBytesIterator range(final String namespace, final Bytes from, final Bytes to,
                                             final boolean toInclusive) {
        return iterator(namespace, from, to, toInclusive, false);
    }

    @Override
    public MemoryLRUCacheBytesIterator reverseRange(final String namespace, final Bytes from, final Bytes to) {
        return iterator(namespace, from, to, true, true);
    }

    @Override
    public MemoryLRUCacheBytesIterator all(final String namespace) {
        return iterator(namespace, null, null, true, false);
    }

    @Override
    public MemoryLRUCacheBytesIterator reverseAll(final String namespace) {
        return iterator(namespace, null, null, true, true);
    }

    @Override
    public long size() {
        long size = 0;
        for (final NamedCacheState named : cachesNow()) {
            final long count;
            synchronized (this) {
                count = cache.entryCount(named.id);
            }
            size += count;
            if (size < 0) {
                return Long.MAX_VALUE;
            }
        }
        return size;
    }

    @Override
    long sizeBytes() {
        return sizeInBytes.get();
    }

    @Override
    synchronized void close(final String namespace) {
        final NamedCacheState removed = caches.remove(namespace);
        if (removed != null) {
            sizeInBytes.addAndGet(-removed.sizeBytes);
            cache.removeCache(removed.id);
            metrics.removeAllCacheLevelSensors(Thread.currentThread().getName(), removed.taskName,
                removed.storeName);
        }
    }

    @Override
    synchronized void clear(final String namespace) {
        final NamedCacheState cleared = caches.get(namespace);
        if (cleared != null) {
            cache.clear(cleared.id);
            cleared.resized(0);
        }
    }

    /** Releases the native entries; the cache is unusable afterwards. */
    @Override
    public synchronized void close() {
        caches.clear();
        sizeInBytes.set(0);
        cache.close();
    }

    private void maybeEvict(final String namespace, final NamedCacheState named) {
        int numEvicted = 0;
        while (sizeInBytes.get() > maxCacheSizeBytes) {
            if (named.sizeBytes == 0) {
                return;
            }
            evict(named);
            numEvicts++;
            numEvicted++;
        }
        if (log.isTraceEnabled()) {
            log.trace("Evicted {} entries from cache {}", numEvicted, namespace);
        }
    }

    /** Evicts {@code named}'s least recently used entry, handing on the entries a dirty eviction flushed. */
    private void evict(final NamedCacheState named) {
        final byte[] change;
        synchronized (this) {
            change = cache.evict(named.id);
        }
        if (change != null) {
            handOn(named, change, true);
        }
    }

    /**
     * Gives the flushed entries of {@code change} to the cache's listener, then takes the cache's new size,
     * after the listener as Kafka Streams does, and records it where Kafka Streams would: after an eviction,
     * and after a flush whose deletions left the cache.
     */
    private void handOn(final NamedCacheState named, final byte[] change, final boolean evicted) {
        final ByteBuffer in = ByteBuffer.wrap(change);
        final long sizeBytes = in.getLong();
        final int count = in.getInt();
        if (count > 0) {
            named.requireListener();
            final int[] starts = new int[count];
            for (int i = 0; i < count; i++) {
                starts[i] = in.position();
                skipLengthPrefixed(in);
                skipLengthPrefixed(in);
                if (i > 0 || !evicted) {
                    // Kafka Streams' flush looks each dirty key up as a read, which counts as a hit.
                    named.hit();
                }
            }
            named.listener.apply(new FlushedEntries(change, starts));
        }
        final boolean deletionsLeft = sizeBytes != named.sizeBytes && !evicted;
        named.resized(sizeBytes);
        if (evicted || deletionsLeft) {
            named.sizeRecorded();
        }
    }

    private MemoryLRUCacheBytesIterator iterator(final String namespace, final Bytes from, final Bytes to,
                                                 final boolean toInclusive, final boolean descending) {
        final NamedCacheState named = getCache(namespace);
        if (named == null) {
            return new SnapshotIterator(Collections.emptyIterator(), null);
        }
        final ByteBuffer in;
        synchronized (this) {
            in = ByteBuffer.wrap(cache.keys(named.id, from == null ? null : from.get(), to == null ? null : to.get(),
                toInclusive, descending));
        }
        final List<Bytes> keys = new ArrayList<>(in.getInt());
        while (in.hasRemaining()) {
            keys.add(Bytes.wrap(bytes(in)));
        }
        return new SnapshotIterator(keys.iterator(), named);
    }

    /**
     * The dirty entries a flush hands on, each decoded from the flushed frames when the listener comes to it
     * and not kept: a flush of a whole cache decoded at once would hold all its entries on the heap while the
     * listener forwards them, and a young collection in the meantime would copy every one of them.
     */
    private final class FlushedEntries extends AbstractList<DirtyEntry> implements RandomAccess {
        private final byte[] change;
        /** Where each entry's key starts in {@link #change}. */
        private final int[] starts;

        FlushedEntries(final byte[] change, final int[] starts) {
            this.change = change;
            this.starts = starts;
        }

        @Override
        public DirtyEntry get(final int index) {
            final ByteBuffer in = ByteBuffer.wrap(change);
            in.position(starts[index]);
            final Bytes key = Bytes.wrap(bytes(in));
            final int length = in.getInt();
            final int frameStart = in.position();
            final LRUCacheEntry entry = frames.readWithContext(change, frameStart + 1, length - 1, change[frameStart] != 0);
            return new DirtyEntry(key, entry.value(), entry);
        }

        @Override
        public int size() {
            return starts.length;
        }
    }

    /** Moves {@code in} past a key or frame: an {@code int} length and that many bytes. */
    private static void skipLengthPrefixed(final ByteBuffer in) {
        final int length = in.getInt();
        in.position(in.position() + length);
    }

    private static byte[] bytes(final ByteBuffer in) {
        final byte[] bytes = new byte[in.getInt()];
        in.get(bytes);
        return bytes;
    }

    private synchronized NamedCacheState getCache(final String namespace) {
        return caches.get(namespace);
    }

    private synchronized List<NamedCacheState> cachesNow() {
        return new ArrayList<>(caches.values());
    }

    private synchronized NamedCacheState getOrCreateCache(final String namespace) {
        return caches.computeIfAbsent(namespace, NamedCacheState::new);
    }

    /** What the JVM keeps of one named cache: its listener, size and metrics; the entries are native. */
    private final class NamedCacheState {
        private final String name;
        private final String storeName;
        private final String taskName;
        private final int id;
        private final Sensor hitRatioSensor;
        private final Sensor totalCacheSizeSensor;
        private DirtyEntryFlushListener listener;
        private long sizeBytes;
        private long numReadHits;
        private long numReadMisses;

        NamedCacheState(final String name) {
            this.name = name;
            this.storeName = ThreadCache.underlyingStoreNamefromCacheName(name);
            this.taskName = ThreadCache.taskIDfromCacheName(name);
            this.id = cache.createCache(name);
            final String thread = Thread.currentThread().getName();
            this.hitRatioSensor = NamedCacheMetrics.hitRatioSensor(metrics, thread, taskName, storeName);
            this.totalCacheSizeSensor = TaskMetrics.totalCacheSizeBytesSensor(thread, taskName, metrics);
        }

        LRUCacheEntry get(final Bytes key) {
            synchronized (SluiceThreadCache.this) {
                int length = cache.get(id, key.get(), readBuffer);
                if (length < NativeRecordCache.MISS) {
                    readBuffer = new byte[Math.max(-length, readBuffer.length * 2)];
                    length = cache.get(id, key.get(), readBuffer);
                }
                if (length == NativeRecordCache.MISS) {
                    numReadMisses++;
                    return null;
                }
                hit();
                return frames.read(readBuffer, 1, length - 1, readBuffer[0] != 0);
            }
        }

        void put(final Bytes key, final LRUCacheEntry entry) {
            synchronized (SluiceThreadCache.this) {
                frames.write(entry);
                resized(cache.put(id, key.get(), frames.frame(), frames.length(), entry.size(), entry.isDirty(),
                    entry.value() == null));
            }
            sizeRecorded();
        }

        void hit() {
            numReadHits++;
            hitRatioSensor.record((double) numReadHits / (double) (numReadHits + numReadMisses));
        }

        void resized(final long newSizeBytes) {
            sizeInBytes.addAndGet(newSizeBytes - sizeBytes);
            sizeBytes = newSizeBytes;
        }

        void sizeRecorded() {
            totalCacheSizeSensor.record(sizeBytes);
        }

        void requireListener() {
            if (listener == null) {
                throw new IllegalArgumentException("No listener for namespace " + name + " registered with cache");
            }
        }
    }

    /** Kafka Streams' cache iterator, over keys read when it was made, each fetched (and so touched) when reached. */
    private static final class SnapshotIterator extends MemoryLRUCacheBytesIterator {
        private final Iterator<Bytes> keys;
        private final NamedCacheState named;
        private KeyValue<Bytes, LRUCacheEntry> nextEntry;

        SnapshotIterator(final Iterator<Bytes> keys, final NamedCacheState named) {
            super(Collections.emptyIterator(), null);
            this.keys = keys;
            this.named = named;
        }

        @Override
        public Bytes peekNextKey() {
            return peekNext().key;
        }

        @Override
        public KeyValue<Bytes, LRUCacheEntry> peekNext() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return nextEntry;
        }

        @Override
        public boolean hasNext() {
            while (nextEntry == null && keys.hasNext()) {
                final Bytes key = keys.next();
                final LRUCacheEntry entry = named.get(key);
                if (entry != null) {
                    nextEntry = new KeyValue<>(key, entry);
                }
            }
            return nextEntry != null;
        }

        @Override
        public KeyValue<Bytes, LRUCacheEntry> next() {
            final KeyValue<Bytes, LRUCacheEntry> result = peekNext();
            nextEntry = null;
            return result;
        }

        @Override
        public void close() {
        }
    }
}
