package dev.sluice.streams.runtime.internals;

import java.util.Arrays;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.internals.ProcessorNode;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;

/**
 * Where each record a task sent since its last commit came from, until the engine says it is answered: one
 * entry per run of records sent while the task processed the same record at the same node, so that a failed
 * record can be handled in the context that produced it.
 *
 * <p>An entry keeps the fields of the record context, not the context: the entries live in arrays reused
 * from commit to commit, so that a task keeping tens of thousands of them (one per flushed cache entry, from
 * the flush until the commit's records are acknowledged) holds no object per entry for a young collection to
 * copy. Contexts, their headers and lists were most of what Sluice's young collections copied; empty headers
 * are not kept at all. The context handed back for a failed record is rebuilt from these fields.
 */
final class SendOrigins {

    /** The record a task was processing, and the node it was at, when it sent a record. */
    record Origin(ProcessorRecordContext record, ProcessorNode<?, ?, ?, ?> node) { }

    private static final int INITIAL_CAPACITY = 64;

    /** The number, among the records sent since the last commit, of each entry's first record. */
    private long[] firsts = new long[INITIAL_CAPACITY];
    private long[] offsets = new long[INITIAL_CAPACITY];
    private long[] timestamps = new long[INITIAL_CAPACITY];
    private int[] partitions = new int[INITIAL_CAPACITY];
    private String[] topics = new String[INITIAL_CAPACITY];
    /** {@code null} where the context's headers were empty. */
    private Headers[] headers = new Headers[INITIAL_CAPACITY];
    private byte[][] rawKeys = new byte[INITIAL_CAPACITY][];
    private byte[][] rawValues = new byte[INITIAL_CAPACITY][];
    private ProcessorNode<?, ?, ?, ?>[] nodes = new ProcessorNode<?, ?, ?, ?>[INITIAL_CAPACITY];
    /** The first entry whose records are not all answered. */
    private int head;
    /** One past the last entry. */
    private int end;
    private long sentSinceCommit;
    // What the last entry was made from: the next record sent from the same place joins it.
    private ProcessorRecordContext lastContext;
    private ProcessorNode<?, ?, ?, ?> lastNode;

    /** Notes that the next record was sent while the task processed {@code context} at {@code node}. */
    void sent(final ProcessorRecordContext context, final ProcessorNode<?, ?, ?, ?> node) {
        if (head == end || context != lastContext || node != lastNode) {
            append(context, node);
        }
        sentSinceCommit++;
    }

    /** The records numbered below {@code below} since the last commit can no longer fail. */
    void answered(final long below) {
        if (below >= sentSinceCommit) {
            forget(head, end);
            head = end;
            return;
        }
        // The entry of record number {@code below} may still serve it and the records after it.
        final int kept = position(below);
        forget(head, kept);
        head = kept;
    }

    /** Everything sent so far was written, or dropped: no failure can come back for it. */
    void clear() {
        forget(head, end);
        head = 0;
        end = 0;
        sentSinceCommit = 0;
        lastContext = null;
        lastNode = null;
    }

    /** Where record number {@code index} since the last commit was sent from. */
    Origin origin(final long index) {
        if (head == end || index >= sentSinceCommit || firsts[head] > index) {
            throw new IllegalStateException("No record number " + index + " is unanswered since the last commit");
        }
        final int at = position(index);
        final ProcessorRecordContext record = new ProcessorRecordContext(timestamps[at], offsets[at], partitions[at],
            topics[at], headers[at] == null ? new RecordHeaders() : headers[at], rawKeys[at], rawValues[at]);
        return new Origin(record, nodes[at]);
    }

    private void append(final ProcessorRecordContext context, final ProcessorNode<?, ?, ?, ?> node) {
        if (end == firsts.length) {
            makeRoom();
        }
        firsts[end] = sentSinceCommit;
        offsets[end] = context.offset();
        timestamps[end] = context.timestamp();
        partitions[end] = context.partition();
        topics[end] = context.topic();
        final Headers contextHeaders = context.headers();
        headers[end] = contextHeaders == null || !contextHeaders.iterator().hasNext() ? null : contextHeaders;
        rawKeys[end] = context.sourceRawKey();
        rawValues[end] = context.sourceRawValue();
        nodes[end] = node;
        end++;
        lastContext = context;
        lastNode = node;
    }

    /** Moves the unanswered entries to the front, into arrays twice as long when they are most of them. */
    private void makeRoom() {
        final int live = end - head;
        final boolean grow = live > firsts.length / 2;
        final int capacity = grow ? firsts.length * 2 : firsts.length;
        firsts = toFront(firsts, grow ? new long[capacity] : firsts, live);
        offsets = toFront(offsets, grow ? new long[capacity] : offsets, live);
        timestamps = toFront(timestamps, grow ? new long[capacity] : timestamps, live);
        partitions = toFront(partitions, grow ? new int[capacity] : partitions, live);
        topics = toFront(topics, grow ? new String[capacity] : topics, live);
        headers = toFront(headers, grow ? new Headers[capacity] : headers, live);
        rawKeys = toFront(rawKeys, grow ? new byte[capacity][] : rawKeys, live);
        rawValues = toFront(rawValues, grow ? new byte[capacity][] : rawValues, live);
        nodes = toFront(nodes, grow ? new ProcessorNode<?, ?, ?, ?>[capacity] : nodes, live);
        if (!grow) {
            forget(live, end);
        }
        head = 0;
        end = live;
    }

    /** Copies the {@code live} unanswered entries of {@code array} to the front of {@code target}. */
    private <T> T toFront(final T array, final T target, final int live) {
        System.arraycopy(array, head, target, 0, live);
        return target;
    }

    /** Drops the references entries {@code from} to {@code to} hold, so that what they point to can go. */
    private void forget(final int from, final int to) {
        Arrays.fill(topics, from, to, null);
        Arrays.fill(headers, from, to, null);
        Arrays.fill(rawKeys, from, to, null);
        Arrays.fill(rawValues, from, to, null);
        Arrays.fill(nodes, from, to, null);
    }

    /** The last entry at or after {@link #head} whose records start at or before record number {@code index}. */
    private int position(final long index) {
        int low = head;
        int high = end - 1;
        while (low < high) {
            final int middle = (low + high + 1) >>> 1;
            if (firsts[middle] <= index) {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        return low;
    }
}
