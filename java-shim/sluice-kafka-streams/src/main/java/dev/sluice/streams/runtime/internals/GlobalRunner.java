package dev.sluice.streams.runtime.internals;

import java.nio.ByteBuffer;

/**
 * The global stores, as the engine's global thread drives them; every method is called on that thread.
 * The engine reads every partition of the global topics: first from the offsets the stores committed to
 * the topics' end (restore), then on as records arrive. An exception stops the global thread, as it stops
 * Kafka Streams' global thread. Batches use {@link RuntimeFraming}; consumed records come in a direct buffer
 * over the engine's memory, valid only during the call.
 */
public interface GlobalRunner {

    /**
     * Framed offsets: each partition of the global topics with the offset of the last record its store
     * committed (-1: none). Called once after creation, before restore.
     */
    byte[] committedOffsets();

    /** An offset is outside its topic: drop every global store's data; every partition is then restored from its start. */
    void wipeState();

    /** Framed consumed records read while restoring, to put into their stores and commit with their offsets. */
    void restore(ByteBuffer records);

    /** Framed consumed records that arrived after restore, for the global processors. */
    void process(ByteBuffer records);

    /** Commits the stores with the offsets of the records they were given. */
    void commit();

    /** Closes the stores, after a last commit when {@code clean}. */
    void close(boolean clean);

    /** The store bytes written since the last commit. */
    long uncommittedBytes();
}
