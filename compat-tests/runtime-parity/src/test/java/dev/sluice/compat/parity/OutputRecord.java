package dev.sluice.compat.parity;

import java.util.Arrays;

/** One committed output record: what the comparison looks at (key, value, timestamp) and where it was. */
record OutputRecord(byte[] key, byte[] value, long timestamp, int partition, long offset) {

    /** Same key, value and timestamp; where the record was is not part of it. */
    boolean sameAs(final OutputRecord other) {
        return Arrays.equals(key, other.key) && Arrays.equals(value, other.value) && timestamp == other.timestamp;
    }
}
