package dev.sluice.streams.runtime.internals;

/**
 * The Rust engine: consumer group, producer and its transactions, commit barrier, restore and internal
 * topics. It runs tasks through a {@link TaskFactory}; its threads call back into the JVM. Sluice's native
 * library must be loaded first ({@code dev.sluice.streams.internals.NativeLibrary#load}).
 */
final class NativeEngine {

    private NativeEngine() {
    }

    /**
     * Starts an engine and returns its handle.
     *
     * @param topologyJson the topology (see {@link EngineTopology}), UTF-8 JSON
     * @param config the application config as framed properties ({@link RuntimeFraming#properties})
     * @param factory called on engine threads to create each task they are assigned, and on the global
     *     thread to create the runner of the global stores
     * @param restoreProgress hears about restoration on engine threads; null for nobody
     * @param paused starts with processing paused (see {@link #setPaused})
     * @throws org.apache.kafka.common.config.ConfigException for a bad config value
     * @throws org.apache.kafka.streams.errors.StreamsException for anything else
     */
    static native long start(byte[] topologyJson, byte[] config, TaskFactory factory, RestoreProgress restoreProgress,
                             boolean paused);

    /**
     * Checks an application config as {@link #start} would take it, client settings included.
     *
     * @param config the application config as framed properties ({@link RuntimeFraming#properties})
     * @return framed properties: the client settings the engine's clients take as another value, each
     *     with the value they use
     * @throws org.apache.kafka.common.config.ConfigException naming the first bad key
     */
    static native byte[] checkConfig(byte[] config);

    /**
     * Stops the engine cleanly (commit, close tasks), joins its threads and releases the handle; a
     * second call does nothing.
     *
     * @throws org.apache.kafka.streams.errors.StreamsException carrying the first error a thread stopped with
     */
    static native void close(long handle);

    /** True once some engine thread stopped on its own. */
    static native boolean hasFailed(long handle);

    /**
     * Pauses or resumes processing: paused, the engine threads neither process, punctuate nor restore their
     * tasks, and stop fetching their inputs; they stay in the group and commit what was processed before.
     */
    static native void setPaused(long handle, boolean paused);

    /**
     * Runs the engine on this topology (JSON, as {@link #start} takes it) from now on, when the topics its
     * pattern sources match changed; the engine threads subscribe to its topics.
     *
     * @throws org.apache.kafka.streams.errors.StreamsException when an internal topic cannot be made
     */
    static native void updateTopology(long handle, byte[] topologyJson);

    /** The names of the engine threads that run, oldest first. */
    static native String[] threadNames(long handle);

    /** Starts one more engine thread, numbered with the lowest free index; returns its name. */
    static native String addThread(long handle);

    /**
     * Stops the oldest engine thread (it commits and closes its tasks) and returns its name; null when
     * no thread runs.
     *
     * @throws org.apache.kafka.common.errors.TimeoutException when it has not stopped within {@code timeoutMs}
     */
    static native String removeThread(long handle, long timeoutMs);

    /**
     * How far behind the end of each partition its consumers read each engine thread is: its main consumer's input
     * partitions of its running tasks, as it computed them on its last turn, and its restore consumer's changelog
     * partitions, as its last read left them (kept while it reads none); framed as
     * {@link RuntimeFraming#readConsumerLags} reads it.
     */
    static native byte[] consumerLags(long handle);

    /**
     * The name of a removed engine thread that outlived its removal's timeout and has ended since, now
     * joined, or null; each such thread is named once.
     */
    static native String reapRetiredThread(long handle);

    /** The name of an engine thread that stopped on its own (it failed), or null. */
    static native String stoppedThread(long handle);

    /**
     * Takes the stopped engine thread {@code name} out of the engine.
     *
     * @throws org.apache.kafka.streams.errors.StreamsException carrying the error the thread stopped with
     */
    static native void takeStoppedThread(long handle, String name);
}
