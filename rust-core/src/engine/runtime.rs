//! An engine instance: resolves the topology, creates internal topics, restores the global
//! stores, and runs `num.stream.threads` threads (and the global thread) until closed or
//! until one fails.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use crate::engine::config::EngineConfig;
use crate::engine::error::{Error, Result};
use crate::engine::global::{self, GlobalStores};
use crate::engine::internal_topics;
use crate::engine::metrics::{EngineMetrics, MetricsSnapshot};
use crate::engine::process_id;
use crate::engine::processor::ProcessorFactory;
use crate::engine::restore::RestoreListener;
use crate::engine::thread::{self as stream_thread, ThreadShared};
use crate::engine::topology::TopologyDescription;
use crate::kafka::Admin;
use crate::store::rocks::RocksDbResources;

/// A running engine instance.
pub struct Engine {
    threads: Vec<JoinHandle<Result<()>>>,
    stop: Arc<AtomicBool>,
    /// The global thread, when the topology has global stores.
    global: Option<JoinHandle<Result<()>>>,
    /// Stops the global thread; set once the stream threads, which read its stores, stopped.
    global_stop: Arc<AtomicBool>,
    metrics: Arc<EngineMetrics>,
}

impl Engine {
    /// Prepares the internal topics of `topology`, restores its global stores and starts
    /// the threads. Tasks are created by `factory` as partitions are assigned;
    /// `restore_listener` hears about restoration.
    pub fn start(
        config: EngineConfig,
        topology: &TopologyDescription,
        factory: Arc<dyn ProcessorFactory>,
        restore_listener: Option<Arc<dyn RestoreListener>>,
    ) -> Result<Engine> {
        let admin = Admin::new(&config.admin_config(), config.client_timeout)?;
        let resolved = internal_topics::prepare(
            &config.application_id,
            topology,
            &admin,
            config.replication_factor,
        )?;
        let process_id =
            process_id::load_or_create(&config.application_dir()).map_err(Error::StateDirectory)?;
        let resources = RocksDbResources::new(&config.rocksdb);
        // Like Kafka Streams, no task runs before the global stores are complete.
        let globals = Arc::new(GlobalStores::restore(
            &resolved.global_stores,
            &config,
            &resources,
            restore_listener.as_deref(),
        )?);
        // The budget is the instance's: each stream thread, and the global thread when
        // there is one, keeps to an equal share.
        let budget_holders = config.num_stream_threads + usize::from(!globals.is_empty());
        let uncommitted_bytes_share = config
            .uncommitted_max_bytes
            .map(|max| max / budget_holders as u64);
        let config = Arc::new(config);
        let stop = Arc::new(AtomicBool::new(false));
        let global_stop = Arc::new(AtomicBool::new(false));
        let metrics = Arc::new(EngineMetrics::default());
        let mut engine = Engine {
            threads: Vec::new(),
            stop: Arc::clone(&stop),
            global: None,
            global_stop: Arc::clone(&global_stop),
            metrics: Arc::clone(&metrics),
        };
        if !globals.is_empty() {
            let (globals, config) = (Arc::clone(&globals), Arc::clone(&config));
            let name = format!("{}-GlobalStreamThread", config.application_id);
            let spawned = thread::Builder::new()
                .name(name)
                .spawn(move || global::run(globals, config, uncommitted_bytes_share, global_stop));
            match spawned {
                Ok(handle) => engine.global = Some(handle),
                Err(e) => return Err(Error::StateDirectory(e)),
            }
        }
        let shared = Arc::new(ThreadShared {
            resources,
            config,
            topology: Arc::new(resolved),
            factory,
            restore_listener,
            metrics,
            process_id,
            stop,
            globals,
            uncommitted_bytes_share,
            admin,
        });
        for index in 1..=shared.config.num_stream_threads {
            let shared = Arc::clone(&shared);
            let name = format!("{}-StreamThread-{index}", shared.config.application_id);
            let spawned = thread::Builder::new()
                .name(name)
                .spawn(move || stream_thread::run(shared, index));
            match spawned {
                Ok(handle) => engine.threads.push(handle),
                Err(e) => {
                    let _ = engine.close();
                    return Err(Error::StateDirectory(e));
                }
            }
        }
        Ok(engine)
    }

    /// The instance's counters.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot()
    }

    /// True once a thread stopped on its own (it failed; [`close`](Self::close) says why).
    pub fn has_failed(&self) -> bool {
        self.threads
            .iter()
            .chain(&self.global)
            .any(JoinHandle::is_finished)
    }

    /// Stops every thread (committing and closing their tasks) and returns the first
    /// error a thread stopped with.
    pub fn close(mut self) -> Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        let mut first_error = None;
        for handle in self.threads.drain(..) {
            if let Err(error) = joined(handle) {
                first_error.get_or_insert(error);
            }
        }
        self.global_stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.global.take() {
            if let Err(error) = joined(handle) {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// What `handle`'s thread returned; a panic becomes an error.
fn joined(handle: JoinHandle<Result<()>>) -> Result<()> {
    handle.join().unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        Err(Error::Topology(format!(
            "engine thread panicked: {message}"
        )))
    })
}
