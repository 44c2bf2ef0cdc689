//! Sluice engine.
//!
//! `store` holds the transactional state stores, `kafka` the Kafka clients, `engine` the
//! task runtime and commit protocol, and `jni` the JVM surface, which only translates.

pub mod engine;
pub mod jni;
pub mod kafka;
pub mod store;
