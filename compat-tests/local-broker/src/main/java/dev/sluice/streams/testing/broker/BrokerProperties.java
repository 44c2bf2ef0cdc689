package dev.sluice.streams.testing.broker;

import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/** Server configuration of a combined broker and controller that is the whole cluster. */
final class BrokerProperties {

    static final int NODE_ID = 1;
    static final String CONTROLLER_LISTENER = "CONTROLLER";
    /** What makes the process this single node on loopback; options cannot replace these. */
    static final Set<String> OWN_KEYS = Set.of("process.roles", "node.id", "controller.quorum.voters",
            "controller.listener.names", "listeners", "advertised.listeners", "listener.security.protocol.map",
            "inter.broker.listener.name", "log.dirs", "log.dir");

    private BrokerProperties() {
    }

    static Properties singleNode(int port, int controllerPort, Path logDir, Map<String, String> overrides) {
        Properties props = new Properties();
        props.setProperty("process.roles", "broker,controller");
        props.setProperty("node.id", Integer.toString(NODE_ID));
        props.setProperty("controller.quorum.voters", NODE_ID + "@" + Ports.HOST + ":" + controllerPort);
        props.setProperty("controller.listener.names", CONTROLLER_LISTENER);
        props.setProperty("listeners",
                "PLAINTEXT://" + Ports.HOST + ":" + port + "," + CONTROLLER_LISTENER + "://" + Ports.HOST + ":" + controllerPort);
        props.setProperty("advertised.listeners", "PLAINTEXT://" + Ports.HOST + ":" + port);
        props.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT," + CONTROLLER_LISTENER + ":PLAINTEXT");
        props.setProperty("inter.broker.listener.name", "PLAINTEXT");
        props.setProperty("log.dirs", logDir.toString());

        // One broker can hold one replica: every internal topic must ask for no more.
        props.setProperty("offsets.topic.replication.factor", "1");
        props.setProperty("transaction.state.log.replication.factor", "1");
        props.setProperty("transaction.state.log.min.isr", "1");
        props.setProperty("share.coordinator.state.topic.replication.factor", "1");
        props.setProperty("share.coordinator.state.topic.min.isr", "1");
        // The default 50 partitions each make the first group or transaction wait for 50
        // partition creations; a few are enough for tests on a small machine.
        props.setProperty("offsets.topic.num.partitions", "4");
        props.setProperty("transaction.state.log.num.partitions", "4");
        // Tests start one consumer at a time and should not wait 3 s for late joiners.
        props.setProperty("group.initial.rebalance.delay.ms", "0");
        props.putAll(overrides);
        return props;
    }
}
