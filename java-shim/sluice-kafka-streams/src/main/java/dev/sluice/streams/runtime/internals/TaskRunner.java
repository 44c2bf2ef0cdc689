package dev.sluice.streams.runtime.internals;

import java.nio.ByteBuffer;

/**
 * One task, as the engine drives it; every method is called on the engine thread that owns the task.
 * An exception stops that thread, as an uncaught exception stops a Kafka Streams thread. Batches use
 * {@link RuntimeFraming}: consumed records cross in a direct buffer over the engine's memory, valid only during
 * the call; produced records in arrays the task reuses ({@link RuntimeFraming.ProducedRecords#drain}), which
 * the engine copies as the call returns.
 */
public interface TaskRunner extends StateRunner {

    /** Every changelog is restored (or there was nothing to restore): the task starts running. */
    void restored();

    /** Processes framed consumed records (offset order per partition); returns the framed records produced. */
    byte[][] process(ByteBuffer records);

    /**
     * Before every {@link #punctuate}: framed offsets holding, for each input partition, how many records
     * the engine's consumer is behind its end (-1: not known yet). A task waits for a partition with data
     * still on the broker before it processes the others (Kafka Streams' {@code max.task.idle.ms}).
     */
    void updateLags(byte[] lags);

    /**
     * After each {@link #process} and {@link #punctuate}: the framed input partitions whose record queue is full
     * (offsets -1), which the engine stops fetching until they are no longer named; Kafka Streams pauses them
     * in its consumer past {@code buffered.records.per.partition}.
     */
    byte[] fullInputs();

    /**
     * After each {@link #process} and {@link #punctuate}: whether the task asked for a commit
     * ({@code ProcessorContext#commit}) and has work to commit; the engine then commits the thread's tasks
     * without waiting for {@code commit.interval.ms}, as a Kafka Streams thread does.
     */
    boolean commitRequested();

    /** Called on every loop iteration while the task runs: wall-clock punctuation when due; returns framed produced records. */
    byte[][] punctuate();

    /**
     * After {@link #process} or {@link #punctuate} threw: the framed records the task produced before it failed,
     * a dead-letter record for the failure among them. Kafka Streams' record collector had handed them to its
     * producer already, which under at-least-once still delivers them as the failed thread closes.
     */
    byte[][] producedBeforeFailure();

    /** The first half of a commit: flushes caches and stores; returns the framed records that produced. */
    byte[][] flush();

    /**
     * The engine's producer could not write one of the records this task produced: Kafka Streams' record
     * collector handles it as its producer's send callback would (production exception handler, fatal
     * errors, dropped-records metric). Throws when the thread must fail.
     *
     * @param index the record's number among those returned since the last commit or rollback, from 0
     * @param record the framed record, as a batch of one
     * @param errorCode the Kafka protocol error code of the failure
     * @param message what the producer said
     * @return the framed records produced instead (dead-letter records)
     */
    byte[][] sendFailed(long index, byte[] record, int errorCode, String message);

    /**
     * The records this task returned since the last commit or rollback numbered below {@code below} are
     * answered: each was written or went to {@link #sendFailed}, so none of them can fail any more.
     */
    void sendsAnswered(long below);

    /**
     * After {@link #flush}: framed inputs with the next offset to consume and Kafka Streams' stream-time
     * metadata; empty when nothing was processed since the last commit.
     */
    byte[] committableOffsets();

    /**
     * The commit's transaction (at-least-once: the delivery of what was produced) succeeded.
     *
     * @param deliveredOffsets framed offsets: the last offset the commit wrote to each partition of the
     *     thread's producer; the task's own changelog partitions among them are committed with its stores
     */
    void committed(byte[] deliveredOffsets);

    /**
     * The transaction was aborted because of {@code cause}: store writes since the last commit are dropped; the
     * engine rewinds the inputs and the task goes on.
     */
    void rolledBack(String cause);

    /** Closes the task; {@code clean} when it committed just before, otherwise it closes dirty. */
    @Override
    void close(boolean clean);

    /** The store bytes written since the last commit. */
    long uncommittedBytes();
}
