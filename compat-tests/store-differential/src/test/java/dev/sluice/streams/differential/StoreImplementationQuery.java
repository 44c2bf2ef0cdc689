package dev.sluice.streams.differential;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.StateQueryRequest;

/**
 * An interactive query no store knows. Kafka Streams' store layers pass unknown queries down, and the
 * bytes store at the bottom answers with a failure naming its own class: the one way to see, from
 * outside a running {@link KafkaStreams}, which implementation serves a store.
 */
final class StoreImplementationQuery implements Query<Void> {

    private static final Pattern STORE_CLASS = Pattern.compile("This store \\(class ([\\w.$]+)\\)");

    static String bottomStoreClass(final KafkaStreams streams, final String storeName) {
        final QueryResult<Void> result = streams
            .query(StateQueryRequest.inStore(storeName).withQuery(new StoreImplementationQuery()))
            .getOnlyPartitionResult();
        final Matcher storeClass = STORE_CLASS.matcher(result.isFailure() ? result.getFailureMessage() : "");
        if (!storeClass.find()) {
            throw new IllegalStateException("Store " + storeName + " did not name its class: " + result);
        }
        return storeClass.group(1);
    }

    @Override
    public String toString() {
        return "which store are you?";
    }
}
