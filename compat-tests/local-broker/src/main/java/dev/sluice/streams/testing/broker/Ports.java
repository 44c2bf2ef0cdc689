package dev.sluice.streams.testing.broker;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Loopback ports for the broker's listeners. */
final class Ports {

    static final String HOST = "127.0.0.1";

    private Ports() {
    }

    /** A port nothing listens on right now; another process may still take it before the broker binds. */
    static int free() {
        try (ServerSocket socket = bind(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new BrokerStartException("no free port on " + HOST + ": " + e.getMessage(), e);
        }
    }

    /** Fails with a clear message when something already listens on the port. */
    static void requireFree(int port) {
        try (ServerSocket ignored = bind(port)) {
            // bound and released: the port is free
        } catch (BindException e) {
            throw new BrokerStartException(
                    "port " + port + " on " + HOST + " is already in use; stop what listens there or choose another port");
        } catch (IOException e) {
            throw new BrokerStartException("cannot listen on " + HOST + ":" + port + ": " + e.getMessage(), e);
        }
    }

    private static ServerSocket bind(int port) throws IOException {
        ServerSocket socket = new ServerSocket();
        try {
            socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), port));
            return socket;
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }
}
