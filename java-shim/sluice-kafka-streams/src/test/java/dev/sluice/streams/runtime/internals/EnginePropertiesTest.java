package dev.sluice.streams.runtime.internals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/** The config the engine gets: client settings the way Kafka Streams hands them to its clients. */
class EnginePropertiesTest {

    private static Map<String, String> engineProperties(final Properties user) {
        user.put(StreamsConfig.APPLICATION_ID_CONFIG, "app");
        user.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        return EngineRuntime.engineProperties(new StreamsConfig(user));
    }

    @Test
    void anUnprefixedClientSettingReachesEveryClientThatHasIt() {
        final Properties user = new Properties();
        user.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 7000);
        user.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        final Map<String, String> properties = engineProperties(user);
        assertEquals("7000", properties.get("consumer.session.timeout.ms"));
        assertEquals("20", properties.get("producer.linger.ms"));
        assertFalse(properties.containsKey("producer.session.timeout.ms"), "the producer has no session timeout");
        assertFalse(properties.containsKey("consumer.linger.ms"), "the consumer has no linger");
    }

    @Test
    void aPrefixedSettingWinsOverTheUnprefixedOne() {
        final Properties user = new Properties();
        user.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "7000");
        user.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "9000");
        assertEquals("9000", engineProperties(user).get("consumer.session.timeout.ms"));
    }

    @Test
    void theStreamsRebalanceProtocolIsNotTheConsumersGroupProtocol() {
        final Properties user = new Properties();
        user.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        final Map<String, String> properties = engineProperties(user);
        assertFalse(properties.containsKey("consumer.group.protocol"), properties.toString());
        assertFalse(properties.containsKey("main.consumer.group.protocol"), properties.toString());
    }

    @Test
    void globalConsumerSettingsReachTheEngineUnderTheirPrefix() {
        final Properties user = new Properties();
        user.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "10");
        user.put(StreamsConfig.globalConsumerPrefix(ConsumerConfig.FETCH_MIN_BYTES_CONFIG), "20");
        final Map<String, String> properties = engineProperties(user);
        // The engine's global consumer reads consumer.* and then, winning, global.consumer.*.
        assertEquals("20", properties.get("global.consumer.fetch.min.bytes"));
        assertEquals("10", properties.get("consumer.fetch.min.bytes"));
    }

    @Test
    void clientIdStaysTheApplicationsNotOneClients() {
        final Properties user = new Properties();
        user.put(StreamsConfig.CLIENT_ID_CONFIG, "my-client");
        final Map<String, String> properties = engineProperties(user);
        assertEquals("my-client", properties.get(StreamsConfig.CLIENT_ID_CONFIG));
        assertFalse(properties.containsKey("consumer.client.id"));
        assertFalse(properties.containsKey("producer.client.id"));
    }
}
