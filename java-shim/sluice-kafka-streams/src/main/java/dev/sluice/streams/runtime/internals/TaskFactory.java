package dev.sluice.streams.runtime.internals;

/**
 * Creates the runner of each task the engine assigns to one of its threads, and the runner of the global
 * stores, and hears how each thread's assignment changes; every method is called on the engine thread
 * concerned.
 */
public interface TaskFactory {

    /**
     * A task was assigned to the calling engine thread.
     *
     * @param inputs framed inputs ({@link RuntimeFraming#readInputs}): the task's source and repartition
     *     partitions with the group's committed offset and metadata
     */
    TaskRunner create(int subtopology, int partition, byte[] inputs);

    /** A standby replica of a task (a warm-up replica too) was assigned to the calling engine thread. */
    StateRunner createStandby(int subtopology, int partition);

    /**
     * The engine's global thread starts: the runner that keeps the global stores.
     *
     * @param logStarts framed offsets ({@link RuntimeFraming#readOffsets}): every partition of the global
     *     topics with the first offset in its log
     */
    GlobalRunner createGlobal(byte[] logStarts);

    /**
     * The calling engine thread's assignment is changing: a rebalance began (Kafka Streams' stream thread
     * is PARTITIONS_REVOKED), or the thread gave its tasks up to rejoin the group. Its tasks are closed
     * after this call.
     */
    void assignmentStarted();

    /**
     * The rebalance ended: the calling engine thread owns these tasks (task i is
     * {@code subtopologies[i]_partitions[i]}; none at all is an assignment too), each one created already or held
     * until it can be, some perhaps running. Kafka Streams' stream thread is PARTITIONS_ASSIGNED now, and RUNNING
     * once every one of them finished restoring.
     */
    void assigned(int[] subtopologies, int[] partitions);

    /**
     * The calling engine thread, number {@code thread} (from 1), joins the application's group subscribed to
     * {@code topics}: the member it polls, whose rebalances go to the engine's member {@code engineMember}.
     */
    EngineGroupMember joinGroup(int thread, String[] topics, long engineMember);

    /** Now on the application's clock (the {@code Time} Kafka Streams was created with), in epoch milliseconds. */
    long milliseconds();

    /**
     * The calling engine thread finished one turn of its loop: it polled for {@code pollNs} and got
     * {@code polledRecords} records, processed them in {@code processNs}, punctuated in {@code punctuateNs},
     * committed (when it was time) in {@code commitNs}, all of it in {@code totalNs}.
     */
    void loopTurned(long pollNs, int polledRecords, long processNs, long punctuateNs, long commitNs, long totalNs);
}
