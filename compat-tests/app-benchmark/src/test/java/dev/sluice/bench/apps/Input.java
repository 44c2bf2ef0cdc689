package dev.sluice.bench.apps;

import java.util.List;

/**
 * An application's input in the order it is produced: the tables it joins against, written before
 * anything else; the events, which a paced run sends at its rate; and the records that close what the
 * events leave open (a windowed aggregation's last windows), written after them.
 */
record Input(List<BenchRecord> tables, List<BenchRecord> events, List<BenchRecord> closing) {

    int size() {
        return tables.size() + events.size() + closing.size();
    }
}
